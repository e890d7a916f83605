/**
 * sharp and ffmpeg work of the clip workflow: frame a still for the clip's aspect, take a thumbnail frame,
 * burn a watermark into the preview. No policy: the activities decide what to make and where it goes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { ClipFraming } from '../domain/clipGeneration';
import { FFMPEG, runFfmpeg, type FfmpegRunStats } from '../providers/media/ffmpeg';
import { launchProcess } from '../providers/media/launcher';
import type { ImageSize } from '../providers/media/images';

/** The backdrop's blur is made this many times smaller than the frame and scaled up (see frameStill). */
const BACKDROP_SCALE = 8;

/**
 * The still at exactly `size`: a centre crop, or (pad) the whole image over a blurred, darkened fill of
 * itself, the usual way a landscape picture is shown in a portrait frame. The image is decoded once and kept as raw
 * pixels between the steps. The fill's blur is wide (a 40th of the frame) and keeps no detail, so it is made at an
 * eighth of the size and scaled up: it looks the same for a small part of the work (a full-size blur of a 1920 px
 * frame was most of a still's CPU).
 */
export async function frameStill(image: Buffer, size: ImageSize, framing: ClipFraming): Promise<Buffer> {
  const decoded = await sharp(image).rotate().removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const upright = () => sharp(decoded.data, { raw: { width: decoded.info.width, height: decoded.info.height, channels: decoded.info.channels } });
  if (framing === 'crop') return upright().resize(size.width, size.height, { fit: 'cover', position: 'centre', kernel: 'lanczos3' }).jpeg({ quality: 95 }).toBuffer();
  const sigma = Math.max(8, Math.round(Math.min(size.width, size.height) / 40));
  const small = await upright()
    .resize(Math.max(1, Math.round(size.width / BACKDROP_SCALE)), Math.max(1, Math.round(size.height / BACKDROP_SCALE)), { fit: 'cover', position: 'centre' })
    .blur(Math.max(0.3, sigma / BACKDROP_SCALE))
    .modulate({ brightness: 0.55, saturation: 0.8 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const backdrop = await sharp(small.data, { raw: { width: small.info.width, height: small.info.height, channels: small.info.channels } })
    .resize(size.width, size.height, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const inside = await upright().resize(size.width, size.height, { fit: 'inside', kernel: 'lanczos3' }).raw().toBuffer({ resolveWithObject: true });
  return sharp(backdrop.data, { raw: { width: backdrop.info.width, height: backdrop.info.height, channels: backdrop.info.channels } })
    .composite([
      {
        input: inside.data,
        raw: { width: inside.info.width, height: inside.info.height, channels: inside.info.channels },
        left: Math.round((size.width - inside.info.width) / 2),
        top: Math.round((size.height - inside.info.height) / 2),
      },
    ])
    .jpeg({ quality: 95 })
    .toBuffer();
}

/** Runs `binary` and gives its whole stdout; a failure says the end of its stderr. */
function execBuffer(binary: string, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = launchProcess(binary, args);
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString('utf8')).slice(-4096)));
    child.on('error', (error) => reject(new Error(`${binary} failed: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(`${binary} failed: ${err.trim().split('\n').slice(-3).join(' | ') || `exit ${code ?? signal}`}`));
    });
  });
}

/** One frame at `atSeconds` (clamped into the clip), `width` px wide, as WebP. */
export async function videoThumbnail(videoPath: string, atSeconds: number, width: number): Promise<{ data: Buffer; width: number; height: number }> {
  const png = await execBuffer(FFMPEG, ['-v', 'error', '-ss', String(atSeconds), '-i', videoPath, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1']);
  if (png.length === 0) throw new Error(`no frame at ${atSeconds}s in ${videoPath}`);
  return thumbnailFromFrame(png, width);
}

/** A frame (PNG) as a WebP thumbnail `width` px wide, never enlarged. */
export async function thumbnailFromFrame(png: Buffer, width: number): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(png).resize({ width, withoutEnlargement: true }).webp({ quality: 80 }).toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Overlays made, by frame size: a clip comes in a few sizes (one per aspect and resolution), so each is drawn once. */
const overlays = new Map<string, Promise<Buffer>>();
const OVERLAYS_KEPT = 16;

/** The watermark overlay of `size`, drawn once per size instead of once per clip (SVG text through librsvg). */
export function watermarkOverlayOnce(size: ImageSize): Promise<Buffer> {
  const key = `${size.width}x${size.height}`;
  let overlay = overlays.get(key);
  if (!overlay) {
    if (overlays.size >= OVERLAYS_KEPT) overlays.delete(overlays.keys().next().value as string);
    overlay = watermarkOverlay(size);
    overlays.set(key, overlay);
    // a failed drawing is not kept: the next clip of that size tries again
    overlay.catch(() => overlays.delete(key));
  }
  return overlay;
}

/** A transparent frame-sized PNG: a large diagonal "PREVIEW" and the product name in a corner. */
export async function watermarkOverlay(size: ImageSize): Promise<Buffer> {
  const { width: w, height: h } = size;
  const big = Math.round(Math.min(w, h) / 5);
  const small = Math.max(14, Math.round(Math.min(w, h) / 28));
  const angle = (-Math.atan2(h, w) * 180) / Math.PI;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
    <g transform="translate(${w / 2} ${h / 2}) rotate(${angle.toFixed(2)})">
      <text x="0" y="0" text-anchor="middle" dominant-baseline="middle" font-family="DejaVu Sans, Liberation Sans, sans-serif" font-weight="700"
        font-size="${big}" fill="#ffffff" fill-opacity="0.32" stroke="#000000" stroke-opacity="0.22" stroke-width="${Math.max(1, Math.round(big / 40))}">PREVIEW</text>
    </g>
    <text x="${w - small}" y="${h - small}" text-anchor="end" font-family="DejaVu Sans, Liberation Sans, sans-serif" font-weight="700"
      font-size="${small}" fill="#ffffff" fill-opacity="0.7">Render Studio · preview</text>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

export interface WatermarkOptions {
  preset: string;
  durationSeconds: number;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
  /**
   * Also writes the frame at `atSeconds` of the input (unmarked) to `path` as PNG, in the same run: one decode and one
   * process instead of two. `atSeconds` must fall inside the clip, or no frame is written.
   */
  frame?: { path: string; atSeconds: number };
}

/** Re-encodes `input` with the watermark burnt in: H.264, yuv420p, +faststart, no audio. */
export async function watermarkVideo(input: string, output: string, size: ImageSize, options: WatermarkOptions): Promise<FfmpegRunStats> {
  const overlay = path.join(path.dirname(output), `${path.basename(output)}.overlay.png`);
  await fs.writeFile(overlay, await watermarkOverlayOnce(size));
  // the clip's picture under the overlay (input 1); with a frame asked for, the picture is split first
  const mark = (picture: string) => `${picture}[1:v]overlay=0:0:format=auto,format=yuv420p[v]`;
  const frame = options.frame;
  try {
    return await runFfmpeg(
      [
        '-y',
        '-i', input,
        '-i', overlay,
        '-filter_complex', frame ? `[0:v]split=2[m][s];${mark('[m]')};[s]trim=start=${frame.atSeconds},setpts=PTS-STARTPTS[f]` : mark('[0:v]'),
        '-map', '[v]',
        '-c:v', 'libx264',
        '-preset', options.preset,
        '-crf', '26',
        '-pix_fmt', 'yuv420p',
        '-movflags', '+faststart',
        '-an',
        output,
        ...(frame ? ['-map', '[f]', '-frames:v', '1', '-c:v', 'png', '-f', 'image2', frame.path] : []),
      ],
      { durationSeconds: options.durationSeconds, signal: options.signal, onProgress: options.onProgress },
    );
  } finally {
    await fs.rm(overlay, { force: true });
  }
}
