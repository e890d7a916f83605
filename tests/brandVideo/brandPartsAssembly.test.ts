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
