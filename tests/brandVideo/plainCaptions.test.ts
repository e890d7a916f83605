/**
 * Issue 44, item 2 for plain captions (no brand kit, or brand captions off): text that does not fit is shrunk or
 * wrapped, never cut off, and non-Latin text is drawn with real glyphs. A plain edit with a long caption, a Chinese one
 * and an Arabic one is rendered for real (the worker's renderEdit, ffmpeg, Pango via sharp) in 9:16 and 16:9, and each
 * caption's frame is checked by pixel colour: the clips are flat grey, so anything not grey was drawn by the caption.
 * Its band (black at 45% over the grey) and its white text lie inside the caption box, inside the safe area and the
 * frame, the text away from the box's edge; the frame shows the caption's still (drawn with the fallback fonts), and
 * every Chinese character of that still is a real glyph, not the plain font's missing-glyph box (as textStill.test.ts
 * checks the brand fonts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { renderEdit } from '../../activities/assemblyMedia';
import { normalizeEditingConfig } from '../../domain/assembly';
import { PLAIN_CAPTION_FONT, buildAssemblyTimeline, captionTrackOf, type AssemblyEdit, type CaptionTimelineClip } from '../../domain/assemblyTimeline';
import { boxInside, brandLayout, type Box } from '../../domain/brandVideo';
import { textStillPng } from '../../providers/media/brandStills';
import { renderTextStill } from '../../providers/media/textStill';
import { inkOf, inkWithoutFallback, sameShape } from '../support/glyphInk';

const execFileAsync = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH ?? 'ffmpeg';

const LONG = 'The Extraordinarily Long-Named Residences at Kensington Gardens, Penthouse Suite';
const CJK = '海景别墅，步行即可到达港口';
const ARABIC = 'فلل الميناء الفاخرة مع إطلالة على البحر';

type Rgb = [number, number, number];
const GREY: Rgb = [128, 128, 128];
/** The band: black at 45% opacity over the grey. */
const BAND: Rgb = [70, 70, 70];
const near = (a: Rgb, b: Rgb, tolerance: number) => a.every((v, i) => Math.abs(v - b[i]) <= tolerance);
/** White text (its anti-aliased edges left out). */
const isInk = (c: Rgb) => c.every((v) => v >= 190);

interface Frame {
  width: number;
  height: number;
  data: Buffer;
}
const pixel = (f: Frame, x: number, y: number): Rgb => {
  const i = (y * f.width + x) * 3;
  return [f.data[i], f.data[i + 1], f.data[i + 2]];
};

async function frameAt(file: string, seconds: number, width: number, height: number): Promise<Frame> {
  const { stdout } = await execFileAsync(FFMPEG, ['-v', 'error', '-ss', String(seconds), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { width, height, data: stdout as unknown as Buffer };
}

/** The smallest box holding every pixel of `f` that `test` picks (null: none). */
function boundsOf(f: Frame, test: (c: Rgb) => boolean): Box | null {
  let [x0, y0, x1, y1] = [f.width, f.height, -1, -1];
  for (let y = 0; y < f.height; y += 1)
    for (let x = 0; x < f.width; x += 1)
      if (test(pixel(f, x, y))) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** Pixels that are not grey outside `box`, `keep` pixels away from it (the encoder's 4:2:0 blocks bleed across its edge). */
function drawnOutside(f: Frame, box: Box, keep = 16): number {
  let n = 0;
  for (let y = 0; y < f.height; y += 1) {
    for (let x = 0; x < f.width; x += 1) {
      const outside = x < box.x - keep || y < box.y - keep || x >= box.x + box.width + keep || y >= box.y + box.height + keep;
      if (outside && !near(pixel(f, x, y), GREY, 12)) n += 1;
    }
  }
  return n;
}

/** Ink within `ring` pixels of `box`'s edge, inside it: text reaching its box's edge was cut off. */
function inkOnEdge(f: Frame, box: Box, ring = 4): number {
  let n = 0;
  for (let y = box.y; y < box.y + box.height; y += 1) {
    for (let x = box.x; x < box.x + box.width; x += 1) {
      const onEdge = x < box.x + ring || y < box.y + ring || x >= box.x + box.width - ring || y >= box.y + box.height - ring;
      if (onEdge && isInk(pixel(f, x, y))) n += 1;
    }
  }
  return n;
}

/** The ink of `box` in the frame against the ink of the caption's still laid over the grey: shared over either's (IoU). */
async function inkAgreement(f: Frame, caption: CaptionTimelineClip & { box: Box }): Promise<number> {
  const { box } = caption;
  const still = await textStillPng({ lines: [caption.asset.text], ...caption.textStyle!, width: box.width, height: box.height });
  const { data, info } = await sharp({ create: { width: box.width, height: box.height, channels: 3, background: { r: 128, g: 128, b: 128 } } })
    .composite([{ input: still }])
    .raw()
    .toBuffer({ resolveWithObject: true });
  let both = 0;
  let either = 0;
  for (let y = 0; y < box.height; y += 1) {
    for (let x = 0; x < box.width; x += 1) {
      const i = (y * box.width + x) * info.channels;
      const expected = isInk([data[i], data[i + 1], data[i + 2]]);
      const drawn = isInk(pixel(f, box.x + x, box.y + y));
      if (expected && drawn) both += 1;
      if (expected || drawn) either += 1;
    }
  }
  return either === 0 ? 0 : both / either;
}

/** Runs of rows holding ink in `box`: the lines of text. */
function inkLines(f: Frame, box: Box): number {
  let lines = 0;
  let inLine = false;
  for (let y = box.y; y < box.y + box.height; y += 1) {
    let ink = false;
    for (let x = box.x; x < box.x + box.width && !ink; x += 1) ink = isInk(pixel(f, x, y));
    if (ink && !inLine) lines += 1;
    inLine = ink;
  }
  return lines;
}

describe('plain captions rendered as stills (renderEdit, ffmpeg)', () => {
  let scratch: string;
  const clipFile: Record<'portrait' | 'landscape', string> = { portrait: '', landscape: '' };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'plain-captions-'));
    for (const [orientation, size] of [['portrait', '180x320'], ['landscape', '320x180']] as const) {
      clipFile[orientation] = path.join(scratch, `${orientation}.mp4`);
      await execFileAsync(FFMPEG, ['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=0x808080:size=${size}:rate=30:duration=2`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clipFile[orientation]]);
    }
  }, 60_000);

  afterAll(async () => {
    await fs.rm(scratch, { recursive: true, force: true });
  });

  async function render(platform: 'tiktok' | 'youtube'): Promise<{ edit: AssemblyEdit; file: string }> {
    const orientation = platform === 'tiktok' ? 'portrait' : 'landscape';
    const edit = buildAssemblyTimeline({
      clips: ['a', 'b', 'c'].map((id) => ({ id, src: `/api/files/clips/w/${id}.mp4`, durationSeconds: 2 })),
      platform,
      editing: normalizeEditingConfig({ captions: [LONG, CJK, ARABIC], caption_position: 'bottom' }),
    });
    const file = path.join(scratch, `${platform}.mp4`);
    await renderEdit(edit, [clipFile[orientation], clipFile[orientation], clipFile[orientation]], file, scratch, { preset: 'ultrafast' });
    return { edit, file };
  }

  it.each(['tiktok', 'youtube'] as const)(
    '%s: a long, a Chinese and an Arabic caption on a band inside the safe area and the frame, shrunk or wrapped, never cut off',
    async (platform) => {
      const { edit, file } = await render(platform);
      const { width, height } = edit.output.size;
      const layout = brandLayout(width, height);
      const captions = captionTrackOf(edit);
      expect(captions.map((c) => c.asset.style)).toEqual(['minimal', 'minimal', 'minimal']);
      // the graph overlaid stills: no caption text file was written for drawtext
      expect((await fs.readdir(scratch)).filter((name) => name.endsWith('.txt') && name.startsWith('caption-'))).toEqual([]);

      const bands: Box[] = [];
      for (const caption of captions) {
        const box = caption.box!;
        const what = `${platform}: ${caption.asset.text}`;
        expect({ what, inSafeArea: boxInside(box, layout.safe), inFrame: boxInside(box, { x: 0, y: 0, width, height }) }).toEqual({ what, inSafeArea: true, inFrame: true });
        const f = await frameAt(file, caption.start + caption.length / 2, width, height);
        // nothing drawn outside the caption's box: the text does not run off it, nor off the frame
        expect({ what, drawnOutside: drawnOutside(f, box) }).toEqual({ what, drawnOutside: 0 });
        const band = boundsOf(f, (c) => near(c, BAND, 14));
        const ink = boundsOf(f, isInk);
        expect(band && ink).toBeTruthy();
        // the band and the text inside the box, the text on the band, away from the box's edge
        expect({ what, band: boxInside(band!, box), ink: boxInside(ink!, box), inkOnBand: boxInside(ink!, band!) }).toEqual({ what, band: true, ink: true, inkOnBand: true });
        expect({ what, inkOnEdge: inkOnEdge(f, box) }).toEqual({ what, inkOnEdge: 0 });
        // the frame shows the caption's still, glyphs and all
        expect({ what, agreement: (await inkAgreement(f, caption as CaptionTimelineClip & { box: Box })) > 0.9 }).toEqual({ what, agreement: true });
        bands.push(band!);
        if (caption.asset.text === LONG) {
          // too long for one line at the caption's size: wrapped, and as wide as the box allows
          expect(inkLines(f, box)).toBeGreaterThanOrEqual(2);
          expect(ink!.width).toBeGreaterThan(box.width * 0.6);
        }
      }
      // a short caption's band hugs its text, as drawtext's did: narrower and lower than the box
      const cjk = captions.findIndex((c) => c.asset.text === CJK);
      expect(bands[cjk].width).toBeLessThan(captions[cjk].box!.width);
      expect(bands[cjk].height).toBeLessThan(captions[cjk].box!.height);
    },
    180_000,
  );

  it("still renders a recorded timeline's plain caption without a box (a job admitted before), with drawtext as then", async () => {
    const built = buildAssemblyTimeline({
      clips: [{ id: 'a', src: '/api/files/clips/w/a.mp4', durationSeconds: 2 }],
      platform: 'youtube',
      editing: normalizeEditingConfig({ captions: ['Harbour View'], caption_position: 'bottom' }),
    });
    // as assembly_jobs.options recorded it before plain captions were stills
    const recorded = JSON.parse(JSON.stringify(built)) as AssemblyEdit;
    const caption = recorded.timeline.tracks[0].clips[0] as CaptionTimelineClip;
    delete caption.box;
    delete caption.textStyle;
    const dir = await fs.mkdtemp(path.join(scratch, 'recorded-'));
    const file = path.join(dir, 'recorded.mp4');
    await renderEdit(recorded, [clipFile.landscape], file, dir, { preset: 'ultrafast' });
    expect(await fs.readFile(path.join(dir, 'caption-0.txt'), 'utf8')).toBe('Harbour View');
    const { width, height } = recorded.output.size;
    const f = await frameAt(file, 1, width, height);
    // drawtext's band and text, centred above 88% of the height; nothing drawn elsewhere
    const band = boundsOf(f, (c) => near(c, BAND, 14));
    const ink = boundsOf(f, isInk);
    expect(band && ink).toBeTruthy();
    expect(boxInside(ink!, band!)).toBe(true);
    expect(band!.y + band!.height).toBeLessThanOrEqual(Math.round(height * 0.88) + 30);
    expect(Math.abs(band!.x + band!.width / 2 - width / 2)).toBeLessThan(8);
    expect(drawnOutside(f, band!)).toBe(0);
  }, 120_000);

  describe('glyphs', () => {
    const SIZE = 64;

    it('draws every character of the Chinese caption from a font that has it, never as the plain font\'s missing-glyph box', async () => {
      const edit = buildAssemblyTimeline({ clips: [{ id: 'a', src: '/api/files/clips/w/a.mp4', durationSeconds: 2 }], platform: 'tiktok', editing: normalizeEditingConfig({ captions: [CJK] }) });
      const style = captionTrackOf(edit)[0].textStyle!;
      expect(style).toMatchObject({ font: PLAIN_CAPTION_FONT, bold: false });
      for (const char of new Set(CJK)) {
        const where = `${char} (U+${char.codePointAt(0)!.toString(16).toUpperCase()})`;
        // the character as the caption's still draws it (its font, weight and colour; the band left out)
        const still = await renderTextStill({ lines: [char], fontFamily: style.font, color: style.color, width: SIZE * 4, height: SIZE * 3, maxFontPx: SIZE, bold: style.bold });
        const drawn = await inkOf(still.png);
        const missing = await inkWithoutFallback(char, style.font, SIZE, false);
        expect({ where, drawn: drawn !== null }).toEqual({ where, drawn: true });
        expect({ where, tofu: sameShape(drawn!, missing!) }).toEqual({ where, tofu: false });
        // ... which the plain font alone draws as its box: it lacks the glyph, Noto Sans CJK SC has it
        expect({ where, plainFontHasIt: sameShape(missing!, (await inkWithoutFallback(char, 'Noto Sans CJK SC', SIZE, false))!) }).toEqual({ where, plainFontHasIt: false });
      }
    });
  });
});
