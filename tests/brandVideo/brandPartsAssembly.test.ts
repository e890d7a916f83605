/**
 * Issue 44, acceptance 1, 2 and 7 (brand parts through the API and the worker): a workspace without a kit assembles
 * as before; once its kit is saved, every new assembly's edit has the title card, brand captions, logo and end card
 * from it, and each part can be switched off per project (PUT /api/projects/:id/aesthetic/brand). Bad input gets a
 * clear 400 and changes nothing. One assembly is rendered by the real worker: the logo is fetched from storage and
 * sits at its corner in the output, and the end card makes the video as long as the dry run said.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import sharp from 'sharp';
import type { AestheticChatState } from '../../domain/assembly';
import { brandPartOf, captionTrackOf, clipsEndOf, type AssemblyEdit } from '../../domain/assemblyTimeline';
import { DEFAULT_BRAND_PARTS } from '../../domain/brandVideo';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';
import { assemble, assemblyUser, probeOutput, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, withAssemblyFile, type AssemblyTestApp, type AssemblyUser } from '../assembly/fixtures';
import { makeAudio, probeStreams } from '../support/audio';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';

const execFileAsync = promisify(execFile);

interface DryRun {
  request: AssemblyEdit;
  preview: { totalDuration: number; brand: { kitStored: boolean; present: Record<string, boolean>; title: string | null; summary: string } };
}

describe('brand parts in assemblies (API, dev server, real worker)', () => {
  let app: AssemblyTestApp;
  let worker: RunningWorker;
  let user: AssemblyUser;
  let clipIds: string[];

  beforeAll(async () => {
    app = await startAssemblyApp();
    worker = await startClipWorker(app.taskQueue, { config: app.config });
    user = await assemblyUser(app.baseUrl, 'Harbour View');
    clipIds = [];
    for (let i = 0; i < 2; i += 1) clipIds.push((await storeClip(app.config, user, { orientation: 'portrait', index: 1, seconds: 2 })).id);
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await removeFixtures();
    await closeTestKnex();
  });

  const dryRun = async (): Promise<DryRun> => {
    const res = await request<DryRun>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds } });
    expect(res.status).toBe(200);
    return res.body;
  };
  const setParts = (json: unknown) => request<AestheticChatState & { error?: unknown; code?: string }>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic/brand`, { method: 'PUT', token: user.token, json });
  const storedConfig = async () => ((await testKnex()('aesthetic_chats').where({ project_id: user.projectId }).first('editing_config')) as { editing_config: unknown } | undefined)?.editing_config ?? null;

  it('without a saved kit the edit has no brand parts', async () => {
    const dry = await dryRun();
    expect(dry.preview.brand).toMatchObject({ kitStored: false, present: { titleCard: false, captions: false, logo: false, endCard: false } });
    expect(dry.request.timeline.tracks).toHaveLength(1);
    expect(dry.request.totalDuration).toBeCloseTo(clipsEndOf(dry.request), 3);
  });

  it("once the kit is saved a new assembly uses all of it by default, the project's name as title", async () => {
    const kit = await request(app.baseUrl, `/api/workspaces/${user.id}/brand-kit`, {
      method: 'PUT',
      token: user.token,
      json: { primaryColor: '#0000FF', secondaryColor: '#FF00FF', font: 'Lato', contact: { company: 'Harbour Estates', phone: '+44 20 7946 0000', website: 'harbour.example' }, callToAction: 'Book a viewing' },
    });
    expect(kit.status).toBe(200);
    const logo = await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } }).png().toBuffer();
    const up = await request(app.baseUrl, `/api/workspaces/${user.id}/brand-kit/logo`, { method: 'PUT', token: user.token, body: logo, headers: { 'content-type': 'image/png' } });
    expect(up.status).toBe(200);
    const dry = await dryRun();
    expect(dry.preview.brand).toMatchObject({ kitStored: true, present: { titleCard: true, logo: true, endCard: true }, title: 'Harbour View' });
    expect(brandPartOf(dry.request, 'logo')).toMatchObject({ position: DEFAULT_BRAND_PARTS.logo_corner, asset: { type: 'image', src: expect.stringMatching(/^\/api\/files\/images\/brand\//) } });
    expect(brandPartOf(dry.request, 'endCard')?.asset).toMatchObject({ background: '#0000FF', callToAction: 'Book a viewing', contactLines: ['Harbour Estates', '+44 20 7946 0000', 'harbour.example'] });
    expect(brandPartOf(dry.request, 'titleCard')?.textStyle.font).toBe('Lato');
    expect(dry.request.totalDuration).toBeCloseTo(clipsEndOf(dry.request) + DEFAULT_BRAND_PARTS.end_card_seconds, 3);
  });

  it.each([
    ['an unknown corner', { logoCorner: 'middle' }, /logoCorner/],
    ['a title card too long', { titleSeconds: 10 }, /titleSeconds is at most 3/],
    ['a switch that is not true or false', { endCard: 'no' }, /endCard must be true or false/],
    ['an unknown field', { watermark: true }, /watermark|Unrecognized/i],
    ['a title too long', { titleText: 'x'.repeat(101) }, /titleText is at most 100/],
    ['a title card too short', { titleSeconds: 1 }, /titleSeconds must be at least 1.5/],
    ['an end card too short', { endCardSeconds: 1.5 }, /endCardSeconds must be at least 2/],
    ['an end card too long', { endCardSeconds: 7 }, /endCardSeconds is at most 6/],
    ['a length that is not a number', { endCardSeconds: '4' }, /endCardSeconds must be a number of seconds/],
    ['a logo too small', { logoSize: 0.01 }, /logoSize must be at least 0.06/],
    ['a logo too large', { logoSize: 0.5 }, /logoSize is at most 0.3/],
    ['a logo more than opaque', { logoOpacity: 1.5 }, /logoOpacity is at most 1/],
    ['a logo too faint to see', { logoOpacity: 0.1 }, /logoOpacity must be at least 0.2/],
    ['a good size beside a bad length (neither is kept)', { logoSize: 0.2, titleSeconds: 9 }, /titleSeconds is at most 3/],
  ])('refuses %s with 400 and keeps the stored config', async (_name, body, message) => {
    const before = await storedConfig();
    const res = await setParts(body);
    expect(res.status).toBe(400);
    expect(String(res.body.error)).toMatch(message);
    expect(await storedConfig()).toEqual(before);
  });

  it('each part can be switched off for the project, and back on', async () => {
    const off = await setParts({ titleCard: false, captions: false, logo: false, endCard: false });
    expect(off.status).toBe(200);
    expect(off.body.editing_config.brand).toMatchObject({ title_card: false, captions: false, logo: false, end_card: false });
    let dry = await dryRun();
    expect(dry.preview.brand).toMatchObject({ present: { titleCard: false, captions: false, logo: false, endCard: false }, summary: 'Brand parts switched off' });
    expect(dry.request.totalDuration).toBeCloseTo(clipsEndOf(dry.request), 3);
    const on = await setParts({ titleCard: true, titleText: '  Βίλες του Λιμανιού  ', logo: true, logoCorner: 'bottom-left', endCard: true });
    expect(on.status).toBe(200);
    dry = await dryRun();
    expect(dry.preview.brand).toMatchObject({ present: { titleCard: true, logo: true, endCard: true, captions: false }, title: 'Βίλες του Λιμανιού' });
    expect(brandPartOf(dry.request, 'logo')?.position).toBe('bottom-left');
    expect(captionTrackOf(dry.request)).toEqual([]);
  });

  it("the lengths, the logo's size and opacity and a Japanese and Chinese title are the dry run's edit", async () => {
    const set = await setParts({ titleSeconds: 1.5, endCardSeconds: 5, logoSize: 0.2, logoOpacity: 0.5, titleText: 'ハーバー・ヴィラズ東京 海港别墅豪华公寓' });
    expect(set.status).toBe(200);
    expect(set.body.editing_config.brand).toMatchObject({ title_seconds: 1.5, end_card_seconds: 5, logo_size: 0.2, logo_opacity: 0.5, title_text: 'ハーバー・ヴィラズ東京 海港别墅豪华公寓' });
    const dry = await dryRun();
    expect(brandPartOf(dry.request, 'titleCard')).toMatchObject({ start: 0, length: 1.5, asset: { text: 'ハーバー・ヴィラズ東京 海港别墅豪华公寓' } });
    const end = brandPartOf(dry.request, 'endCard')!;
    expect(end.start).toBeCloseTo(clipsEndOf(dry.request), 3);
    expect(end.length).toBe(5);
    expect(dry.request.totalDuration).toBeCloseTo(clipsEndOf(dry.request) + 5, 3);
    // 9:16 at 1080 x 1920: the 2:1 logo's longer side is 20% of 1080
    const logo = brandPartOf(dry.request, 'logo')!;
    expect(logo).toMatchObject({ opacity: 0.5, box: { width: 216, height: 108 } });
    // back to the defaults but for the title, for the render below
    const back = await setParts({ titleSeconds: DEFAULT_BRAND_PARTS.title_seconds, endCardSeconds: DEFAULT_BRAND_PARTS.end_card_seconds, logoSize: DEFAULT_BRAND_PARTS.logo_size, logoOpacity: DEFAULT_BRAND_PARTS.logo_opacity });
    expect(back.body.editing_config.brand).toMatchObject({ ...DEFAULT_BRAND_PARTS, title_text: 'ハーバー・ヴィラズ東京 海港别墅豪华公寓', logo_corner: 'bottom-left', captions: false });
  });

  it('the worker renders the edit the dry run showed, with music: logo at its corner, end card to the end, sound to the end', async () => {
    const track = await request<{ track: { id: string } }>(app.baseUrl, `/api/workspaces/${user.id}/music?name=Tone.wav`, {
      method: 'POST',
      token: user.token,
      body: await makeAudio('wav', { seconds: 20, channels: 2 }),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(track.status).toBe(201);
    expect((await request(app.baseUrl, `/api/projects/${user.projectId}/aesthetic/music`, { method: 'PUT', token: user.token, json: { trackId: track.body.track.id } })).status).toBe(200);
    const dry = await dryRun();
    // the music plays under the end card too
    expect(dry.request.timeline.soundtrack?.length).toBeCloseTo(dry.request.totalDuration, 3);
    const started = await assemble(app.baseUrl, user, clipIds, { platform: 'portrait' });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    const { job } = await waitForAssembly(app.baseUrl, user, jobId, { timeoutMs: 300_000, intervalMs: 300 });
    expect(job).toMatchObject({ status: 'completed', error: null });
    const stored = await testKnex()('assembly_jobs').where({ id: jobId }).first('options');
    expect(stored.options.timeline).toEqual(dry.request);
    const logo = brandPartOf(dry.request, 'logo')!;
    await withAssemblyFile(user.id, jobId, 'video.mp4', async (file) => {
      const out = await probeOutput(file);
      const audio = (await probeStreams(file)).filter((st) => st.type === 'audio');
      expect(audio).toHaveLength(1);
      expect(audio[0].duration ?? 0).toBeCloseTo(dry.request.totalDuration, 1);
      expect([out.width, out.height]).toEqual([1080, 1920]);
      expect(out.duration).toBeCloseTo(dry.request.totalDuration, 1);
      const pixelAt = async (t: number, x: number, y: number) => {
        const { stdout } = await execFileAsync('ffmpeg', ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-vf', `crop=2:2:${x}:${y}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { encoding: 'buffer' });
        return [...(stdout as unknown as Buffer).subarray(0, 3)];
      };
      // the Japanese and Chinese title, white on the kit's blue, wrapped inside its box: ink in the box, none on its edge
      const title = brandPartOf(dry.request, 'titleCard')!;
      const { stdout: titleRaw } = await execFileAsync(
        'ffmpeg',
        ['-v', 'error', '-ss', '1', '-i', file, '-frames:v', '1', '-vf', `crop=${title.box.width}:${title.box.height}:${title.box.x}:${title.box.y}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
        { encoding: 'buffer', maxBuffer: 32 * 1024 * 1024 },
      );
      const titleRgb = titleRaw as unknown as Buffer;
      let ink = 0;
      let inkOnEdge = 0;
      for (let y = 0; y < title.box.height; y += 1) {
        for (let x = 0; x < title.box.width; x += 1) {
          const i = (y * title.box.width + x) * 3;
          if (titleRgb[i] < 200 || titleRgb[i + 1] < 200 || titleRgb[i + 2] < 200) continue;
          ink += 1;
          // the band 4-12 px inside the box's edge (the text keeps a padding of 8% of the box; the outermost pixels
          // share the encoder's blocks with the clip around the box)
          const fromEdge = Math.min(x, y, title.box.width - 1 - x, title.box.height - 1 - y);
          if (fromEdge >= 4 && fromEdge < 12) inkOnEdge += 1;
        }
      }
      expect(ink).toBeGreaterThan(title.box.width * title.box.height * 0.02);
      expect(inkOnEdge).toBe(0);
      // after the title card, the logo's centre is its red
      const [r, g, b] = await pixelAt(clipsEndOf(dry.request) - 0.3, logo.box.x + logo.box.width / 2, logo.box.y + logo.box.height / 2);
      expect(r).toBeGreaterThan(200);
      expect(g + b).toBeLessThan(120);
      // the end card's corner is the kit's primary colour
      const corner = await pixelAt(dry.request.totalDuration - 0.3, 4, 4);
      expect(corner[2]).toBeGreaterThan(200);
      expect(corner[0] + corner[1]).toBeLessThan(80);
    });
  }, 320_000);
});
