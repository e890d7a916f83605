/**
 * Issue 44, acceptance 2 and 7: the brand parts of an edit rendered for real (the worker's renderEdit, ffmpeg, Pango
 * via sharp), frames sampled from the output and checked by pixel colour: the logo at its corner, the title card and
 * the brand captions inside the safe area, no drawn pixel in the 9:16 bands Reels and TikTok cover (with a long name
 * and non-Latin text), and the end card's length counted in frames. The clips are flat grey, so anything that is not
 * grey was drawn by the brand parts; each part has its own known colour. A long company name with Japanese, Chinese,
 * Korean and Arabic on the title card, captions and end card is drawn inside each part's box, never reaching its edge
 * (cut off), in 9:16 and 16:9 (textStill.test.ts checks each of those glyphs against its missing-glyph box).
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

/** Pixels near `colour` within `ring` pixels of `box`'s edge, inside it: text reaching its box's edge was cut off. */
function countOnEdge(f: Frame, box: Box, colour: Rgb, tolerance: number, ring = 3): number {
  let n = 0;
  for (let y = box.y; y < box.y + box.height; y += 1) {
    for (let x = box.x; x < box.x + box.width; x += 1) {
      const onEdge = x < box.x + ring || y < box.y + ring || x >= box.x + box.width - ring || y >= box.y + box.height - ring;
      if (onEdge && near(pixel(f, x, y), colour, tolerance)) n += 1;
    }
  }
  return n;
}

/** Pixels near `colour` in `box`. */
const countIn = (f: Frame, box: Box, colour: Rgb, tolerance: number): number => count(f, [box.y, box.y + box.height], colour, tolerance, [box.x, box.x + box.width]);

/**
 * Pixels outside the safe area, `keep` pixels away from it (the encoder's 4:2:0 blocks bleed across its edge), that
 * are not `background`: anything the brand parts drew out there.
 */
function countOutsideSafe(f: Frame, safe: Box, background: Rgb, keep = 16): number {
  let n = 0;
  for (let y = 0; y < f.height; y += 1) {
    for (let x = 0; x < f.width; x += 1) {
      const outside = x < safe.x - keep || y < safe.y - keep || x >= safe.x + safe.width + keep || y >= safe.y + safe.height + keep;
      if (outside && !near(pixel(f, x, y), background, 12)) n += 1;
    }
  }
  return n;
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

  async function render(platform: 'tiktok' | 'youtube', parts: Record<string, unknown>, captions: string[], source: BrandSource = brand, name = ''): Promise<{ edit: AssemblyEdit; file: string }> {
    const orientation = platform === 'tiktok' ? 'portrait' : 'landscape';
    const editing = normalizeEditingConfig({ captions, caption_position: 'bottom', brand: parts });
    const edit = buildAssemblyTimeline({
      clips: [
        { id: 'a', src: '/api/files/clips/w/a.mp4', durationSeconds: 3 },
        { id: 'b', src: '/api/files/clips/w/b.mp4', durationSeconds: 3 },
      ],
      platform,
      editing,
      brand: source,
    });
    const file = path.join(scratch, `${platform}-${Object.keys(parts).length}${name}.mp4`);
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

  const WHITE: Rgb = [255, 255, 255];
  const worldBrand: BrandSource = {
    ...brand,
    logo: null,
    title: 'ハーバー・ヴィラズ東京湾岸レジデンス 海港别墅豪华公寓 فلل الميناء الفاخرة Harbour Villas International',
    contactLines: ['Harbour Estates International Property Marketing & Lettings Group', '海港地产有限公司 · ハーバー不動産株式会社 · 항구 부동산', 'شركة فلل الميناء الفاخرة للتطوير العقاري'],
    callToAction: '内覧のご予約はこちら · احجز جولة',
  };

  it.each(['tiktok', 'youtube'] as const)(
    '%s: a long name in Japanese, Chinese, Korean and Arabic on the title card, captions and end card, drawn inside the safe area and never cut off',
    async (platform) => {
      const { edit, file } = await render(platform, { title_style: 'card', end_card_seconds: 2 }, ['항구 빌라 — 바다가 보이는 펜트하우스', 'فلل الميناء الفاخرة مع إطلالة على البحر'], worldBrand, '-world');
      const { width, height } = edit.output.size;
      const layout = brandLayout(width, height);
      const title = brandPartOf(edit, 'titleCard')!;
      const end = brandPartOf(edit, 'endCard')!;
      const captions = captionTrackOf(edit);
      expect(captions.map((c) => c.asset.style)).toEqual(['brand', 'brand']);
      for (const box of [title.box, ...captions.map((c) => c.box as Box), end.callToAction.box, end.contact.box]) expect(boxInside(box, layout.safe)).toBe(true);

      // t=1: the title (white on the brand colour) and the first caption (accent on a dark band)
      const early = await frameAt(file, 1, width, height);
      expect(countOutsideSafe(early, layout.safe, GREY)).toBe(0);
      expect(countIn(early, title.box, WHITE, 40)).toBeGreaterThan(title.box.width * title.box.height * 0.02);
      // more than a third of the box's rows hold text: the long name is wrapped, not shrunk to one thin line
      const inkRows = new Set<number>();
      for (let y = title.box.y; y < title.box.y + title.box.height; y += 1) if (count(early, [y, y + 1], WHITE, 40, [title.box.x, title.box.x + title.box.width]) > 0) inkRows.add(y);
      expect(inkRows.size).toBeGreaterThan(title.box.height / 3);
      expect(countOnEdge(early, title.box, WHITE, 60)).toBe(0);
      const cap = captions[0].box as Box;
      expect(countIn(early, cap, ACCENT, 70)).toBeGreaterThan(100);
      expect(countOnEdge(early, cap, ACCENT, 90)).toBe(0);

      // the second caption (Arabic) after the title
      const later = await frameAt(file, captions[1].start + captions[1].length / 2, width, height);
      expect(countOutsideSafe(later, layout.safe, GREY)).toBe(0);
      expect(countIn(later, cap, ACCENT, 70)).toBeGreaterThan(100);
      expect(countOnEdge(later, cap, ACCENT, 90)).toBe(0);

      // the end card: the call to action (accent) and three contact lines (white), each inside its box
      const card = await frameAt(file, edit.totalDuration - 0.5, width, height);
      expect(countOutsideSafe(card, layout.safe, PRIMARY)).toBe(0);
      const cta = end.callToAction.box;
      const contact = end.contact.box;
      expect(countIn(card, cta, ACCENT, 70)).toBeGreaterThan(100);
      expect(countOnEdge(card, cta, ACCENT, 90)).toBe(0);
      expect(countIn(card, contact, WHITE, 40)).toBeGreaterThan(300);
      expect(countOnEdge(card, contact, WHITE, 60)).toBe(0);
      // no text between and around the boxes: the card's colour only
      const textColours = [WHITE, ACCENT];
      for (const colour of textColours) expect(count(card, [layout.safe.y, cta.y - 2], colour, 60, [layout.safe.x, layout.safe.x + layout.safe.width])).toBe(0);
    },
    180_000,
  );
});
