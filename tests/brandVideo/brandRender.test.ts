/**
 * Issue 44, acceptance 2 and 7: the brand parts of an edit rendered for real (the worker's renderEdit, ffmpeg, Pango
 * via sharp), frames sampled from the output and checked by pixel colour: the logo at its corner, the title card and
 * the brand captions inside the safe area, no drawn pixel in the 9:16 bands Reels and TikTok cover (with a long name
 * and non-Latin text), and the end card's length counted in frames. The clips are flat grey, so anything that is not
 * grey was drawn by the brand parts; each part has its own known colour.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { renderEdit } from '../../activities/assemblyMedia';
import { normalizeEditingConfig } from '../../domain/assembly';
import { brandPartOf, buildAssemblyTimeline, captionTrackOf, clipsEndOf, type AssemblyEdit } from '../../domain/assemblyTimeline';
import { boxInside, brandLayout, type Box, type BrandSource } from '../../domain/brandVideo';

const execFileAsync = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH ?? 'ffmpeg';

type Rgb = [number, number, number];
const GREY: Rgb = [128, 128, 128];
const LOGO: Rgb = [255, 0, 0];
const PRIMARY: Rgb = [0, 0, 255];
const ACCENT: Rgb = [255, 0, 255];
const hex = (c: Rgb) => `#${c.map((v) => v.toString(16).padStart(2, '0')).join('').toUpperCase()}`;
const near = (a: Rgb, b: Rgb, tolerance: number) => a.every((v, i) => Math.abs(v - b[i]) <= tolerance);

interface Frame {
  width: number;
  height: number;
  data: Buffer;
}
const pixel = (f: Frame, x: number, y: number): Rgb => {
  const i = (Math.round(y) * f.width + Math.round(x)) * 3;
  return [f.data[i], f.data[i + 1], f.data[i + 2]];
};
const centre = (b: Box) => [b.x + b.width / 2, b.y + b.height / 2] as const;

/** Pixels of `box` (or the rows from y0 to y1) near `colour`. */
function count(f: Frame, rows: [number, number], colour: Rgb, tolerance: number, cols: [number, number] = [0, f.width]): number {
  let n = 0;
  for (let y = rows[0]; y < rows[1]; y += 1) for (let x = cols[0]; x < cols[1]; x += 1) if (near(pixel(f, x, y), colour, tolerance)) n += 1;
  return n;
}

async function frameAt(file: string, seconds: number, width: number, height: number): Promise<Frame> {
  const { stdout } = await execFileAsync(FFMPEG, ['-v', 'error', '-ss', String(seconds), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { width, height, data: stdout as unknown as Buffer };
}

/** Every frame's top-left pixel (1x1 of the frame's corner area), for telling where the end card starts and ends. */
async function cornerColours(file: string): Promise<Rgb[]> {
  const { stdout } = await execFileAsync(FFMPEG, ['-v', 'error', '-i', file, '-vf', 'crop=8:8:0:0,scale=1:1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 16 * 1024 * 1024,
  });
  const data = stdout as unknown as Buffer;
  const out: Rgb[] = [];
  for (let i = 0; i + 2 < data.length; i += 3) out.push([data[i], data[i + 1], data[i + 2]]);
  return out;
}

async function durationOf(file: string): Promise<number> {
  const { stdout } = await execFileAsync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  return Number(stdout.trim());
}

describe('brand parts rendered (renderEdit, ffmpeg)', () => {
  let scratch: string;
  let logoFile: string;
  const clipFile: Record<'portrait' | 'landscape', string> = { portrait: '', landscape: '' };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'brand-render-'));
    for (const [orientation, size] of [['portrait', '180x320'], ['landscape', '320x180']] as const) {
      clipFile[orientation] = path.join(scratch, `${orientation}.mp4`);
      await execFileAsync(FFMPEG, ['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=0x808080:size=${size}:rate=30:duration=3`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clipFile[orientation]]);
    }
    logoFile = path.join(scratch, 'logo.png');
    // a wide logo: red with a transparent margin, so the watermark's box is its aspect
    await sharp({ create: { width: 400, height: 200, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } }).png().toFile(logoFile);
  }, 60_000);

  afterAll(async () => {
    await fs.rm(scratch, { recursive: true, force: true });
  });

  const brand: BrandSource = {
    primaryColor: hex(PRIMARY),
    secondaryColor: hex(ACCENT),
    font: 'Inter',
    logo: { src: '/api/files/images/brand/w/logo.png', width: 400, height: 200 },
    contactLines: ['Harbour Estates', '+44 20 7946 0000', 'harbour.example'],
    callToAction: 'Book a viewing',
    title: 'The Extraordinarily Long-Named Residences at Kensington Gardens Square — Гаванские виллы · فلل الميناء',
  };

  async function render(platform: 'tiktok' | 'youtube', parts: Record<string, unknown>, captions: string[]): Promise<{ edit: AssemblyEdit; file: string }> {
    const orientation = platform === 'tiktok' ? 'portrait' : 'landscape';
    const editing = normalizeEditingConfig({ captions, caption_position: 'bottom', brand: parts });
    const edit = buildAssemblyTimeline({
      clips: [
        { id: 'a', src: '/api/files/clips/w/a.mp4', durationSeconds: 3 },
        { id: 'b', src: '/api/files/clips/w/b.mp4', durationSeconds: 3 },
      ],
      platform,
      editing,
      brand,
    });
    const file = path.join(scratch, `${platform}-${Object.keys(parts).length}.mp4`);
    await renderEdit(edit, [clipFile[orientation], clipFile[orientation]], file, scratch, { preset: 'ultrafast', logoFile });
    return { edit, file };
  }

  it('9:16: logo at its corner, title card and captions inside the safe area, nothing drawn in the covered bands, a 3 s end card', async () => {
    const { edit, file } = await render('tiktok', { title_style: 'card', logo_corner: 'top-right', logo_opacity: 1, end_card_seconds: 3 }, [
      'Βίλες του Λιμανιού — Πεντχάουζ με θέα στη θάλασσα και ιδιωτική πισίνα',
      'Supercalifragilisticexpialidocious-Pneumonoultramicroscopic-Penthouse-Suites',
    ]);
    const { width, height } = edit.output.size;
    const layout = brandLayout(width, height);
    const logo = brandPartOf(edit, 'logo');
    const title = brandPartOf(edit, 'titleCard');
    const end = brandPartOf(edit, 'endCard');
    expect(logo && title && end).toBeTruthy();
    const captionBoxes = captionTrackOf(edit).map((c) => c.box as Box);
    for (const box of [logo!.box, title!.box, ...captionBoxes, end!.logoBox, end!.callToAction.box, end!.contact.box]) expect(boxInside(box, layout.safe)).toBe(true);

    const unsafeRows: Array<[number, number]> = [
      [0, layout.safe.y],
      [layout.safe.y + layout.safe.height, height],
    ];
    const checkBands = (f: Frame) => {
      for (const rows of unsafeRows) {
        // no pixel of any brand colour, and away from the boundary (the encoder's blocks) all grey
        for (const colour of [LOGO, PRIMARY, ACCENT]) expect(count(f, rows, colour, 90)).toBe(0);
        const inner: [number, number] = rows[0] === 0 ? [0, rows[1] - 16] : [rows[0] + 16, rows[1]];
        expect(count(f, inner, GREY, 12)).toBe((inner[1] - inner[0]) * width);
      }
    };

    // t=1: title card (brand colour) and first caption (accent text on a dark band), logo top right
    const early = await frameAt(file, 1, width, height);
    checkBands(early);
    expect(near(pixel(early, ...centre(logo!.box)), LOGO, 24)).toBe(true);
    expect(near(pixel(early, logo!.box.x + 4, logo!.box.y + 4), LOGO, 40)).toBe(true);
    // the other top corner of the safe area is the clip's grey
    expect(near(pixel(early, layout.safe.x + 10, layout.safe.y + 10), GREY, 12)).toBe(true);
    expect(near(pixel(early, title!.box.x + 6, title!.box.y + 6), PRIMARY, 24)).toBe(true);
    // the title's text (white on blue) is drawn, wrapped inside its box
    expect(count(early, [title!.box.y, title!.box.y + title!.box.height], [255, 255, 255], 40, [title!.box.x, title!.box.x + title!.box.width])).toBeGreaterThan(200);
    const cap = captionBoxes[0];
    expect(count(early, [cap.y, cap.y + cap.height], ACCENT, 70, [cap.x, cap.x + cap.width])).toBeGreaterThan(100);
    expect(near(pixel(early, cap.x + 3, cap.y + 3), [Math.round(128 * 0.45), Math.round(128 * 0.45), Math.round(128 * 0.45)], 16)).toBe(true);

    // t=4: the title is gone, the second caption and the logo stay
    const later = await frameAt(file, 4, width, height);
    checkBands(later);
    expect(near(pixel(later, title!.box.x + 6, title!.box.y + 6), GREY, 12)).toBe(true);
    expect(near(pixel(later, ...centre(logo!.box)), LOGO, 24)).toBe(true);
    expect(count(later, [cap.y, cap.y + cap.height], ACCENT, 70, [cap.x, cap.x + cap.width])).toBeGreaterThan(100);

    // the end card: brand colour to the edges, logo in its box, call to action in the accent colour
    const clipsEnd = clipsEndOf(edit);
    expect(edit.totalDuration).toBeCloseTo(clipsEnd + 3, 3);
    expect(await durationOf(file)).toBeCloseTo(edit.totalDuration, 1);
    const card = await frameAt(file, edit.totalDuration - 0.5, width, height);
    expect(near(pixel(card, 2, 2), PRIMARY, 24)).toBe(true);
    expect(near(pixel(card, width - 3, height - 3), PRIMARY, 24)).toBe(true);
    expect(near(pixel(card, ...centre(end!.logoBox)), LOGO, 24)).toBe(true);
    const cta = end!.callToAction.box;
    expect(count(card, [cta.y, cta.y + cta.height], ACCENT, 70, [cta.x, cta.x + cta.width])).toBeGreaterThan(100);
    const contact = end!.contact.box;
    expect(count(card, [contact.y, contact.y + contact.height], [255, 255, 255], 40, [contact.x, contact.x + contact.width])).toBeGreaterThan(100);
    // in the bands the end card is its plain colour: no text
    for (const rows of unsafeRows) expect(count(card, [rows[0] === 0 ? 0 : rows[0] + 16, rows[0] === 0 ? rows[1] - 16 : rows[1]], PRIMARY, 24)).toBe((rows[1] - rows[0] - 16) * width);

    // the end card's length, counted in frames: the corner is the brand colour from the clips' end to the video's end
    const corners = await cornerColours(file);
    const blue = corners.map((c) => near(c, PRIMARY, 30));
    const first = blue.indexOf(true);
    expect(first / 30).toBeCloseTo(clipsEnd, 1);
    expect(blue.slice(first).every(Boolean)).toBe(true);
    expect(blue.filter(Boolean).length / 30).toBeCloseTo(3, 1);
  }, 180_000);

  it('16:9 with parts switched off: only the logo, at the bottom left at half opacity; no title, plain captions, no end card', async () => {
    const { edit, file } = await render('youtube', { title_card: false, captions: false, end_card: false, logo_corner: 'bottom-left', logo_opacity: 0.5 }, ['Harbour View']);
    const { width, height } = edit.output.size;
    expect(brandPartOf(edit, 'titleCard')).toBeNull();
    expect(brandPartOf(edit, 'endCard')).toBeNull();
    expect(captionTrackOf(edit)[0].asset.style).toBe('minimal');
    expect(edit.totalDuration).toBeCloseTo(clipsEndOf(edit), 3);
    expect(await durationOf(file)).toBeCloseTo(edit.totalDuration, 1);
    const logo = brandPartOf(edit, 'logo')!;
    const layout = brandLayout(width, height);
    expect(logo.box.x).toBe(layout.safe.x);
    expect(logo.box.y + logo.box.height).toBe(layout.safe.y + layout.safe.height);
    const f = await frameAt(file, 1, width, height);
    // red at half opacity over grey
    expect(near(pixel(f, ...centre(logo.box)), [Math.round((255 + 128) / 2), 64, 64], 24)).toBe(true);
    expect(near(pixel(f, width - layout.safe.x - 10, layout.safe.y + 10), GREY, 12)).toBe(true);
    const last = await frameAt(file, edit.totalDuration - 0.2, width, height);
    expect(near(pixel(last, 2, 2), GREY, 12)).toBe(true);
  }, 180_000);
});
