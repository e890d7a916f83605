/**
 * `npm run media:landing`: renders the landing page's hero and demo videos with the product's own local clip
 * pipeline (providers/local/video.ts: the still framed for the aspect, then ffmpeg's effect filter graph) from
 * the stills in frontend/media-src/, takes each poster from the clip's first frame (activities/clipMedia.ts),
 * and writes them with a manifest into frontend/src/views/Landing/media/, where Vite picks them up as hashed
 * assets. The outputs are committed (each well under 1 MB), so builds need no ffmpeg and stay fast;
 * tests/landing/landingMedia.test.ts checks that they still match the stills and this script's settings.
 * Run it again after changing a still, an entry below, or the clip effects.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { videoThumbnail } from '../activities/clipMedia';
import type { Platform, VideoEffect } from '../domain/constants';
import { LocalImageToVideoProvider } from '../providers/local/video';
import type { ClipAspectRatio } from '../providers/types';

const ROOT = path.resolve(__dirname, '..');
export const STILLS_DIR = path.join(ROOT, 'frontend', 'media-src');
export const LANDING_MEDIA_DIR = path.join(ROOT, 'frontend', 'src', 'views', 'Landing', 'media');
export const MANIFEST_FILE = 'media.json';

/** Small files for a landing page: a slower x264 preset and a higher CRF than the product's clips. */
export const LANDING_ENCODE = { preset: 'slow', crf: 28 } as const;
const CLIP_SECONDS = 5;
const POSTER_WIDTH = 1280;

export interface LandingVideoSpec {
  name: 'hero' | 'demo';
  still: string;
  effect: VideoEffect;
  platform: Platform;
  aspectRatio: ClipAspectRatio;
}

export const LANDING_VIDEOS: readonly LandingVideoSpec[] = [
  { name: 'hero', still: 'hero-exterior.svg', effect: 'Day to Night', platform: 'YouTube', aspectRatio: '16:9' },
  { name: 'demo', still: 'demo-interior.svg', effect: 'Walk Through', platform: 'YouTube', aspectRatio: '16:9' },
];

export interface LandingVideoEntry extends LandingVideoSpec {
  stillSha256: string;
  video: string;
  videoSha256: string;
  poster: string;
  model: string;
  width: number;
  height: number;
  durationSeconds: number;
  fps: number;
  bytes: number;
  encode: typeof LANDING_ENCODE;
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function renderOne(spec: LandingVideoSpec, provider: LocalImageToVideoProvider): Promise<LandingVideoEntry> {
  const stillSource = await fs.readFile(path.join(STILLS_DIR, spec.still));
  const image = await sharp(stillSource).png().toBuffer();
  const { jobId } = await provider.submit({
    image,
    effect: spec.effect,
    platform: spec.platform,
    aspectRatio: spec.aspectRatio,
    durationSeconds: CLIP_SECONDS,
  });
  try {
    const result = await provider.wait(jobId);
    const video = `${spec.name}.mp4`;
    const poster = `${spec.name}-poster.webp`;
    const bytes = await fs.readFile(result.path);
    await fs.writeFile(path.join(LANDING_MEDIA_DIR, video), bytes);
    const frame = await videoThumbnail(result.path, 0, POSTER_WIDTH);
    await fs.writeFile(path.join(LANDING_MEDIA_DIR, poster), frame.data);
    return {
      ...spec,
      stillSha256: sha256(stillSource),
      video,
      videoSha256: sha256(bytes),
      poster,
      model: result.model,
      width: result.width,
      height: result.height,
      durationSeconds: result.durationSeconds,
      fps: result.fps,
      bytes: bytes.length,
      encode: LANDING_ENCODE,
    };
  } finally {
    await provider.release(jobId);
  }
}

async function main(): Promise<void> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'rs-landing-media-'));
  const provider = new LocalImageToVideoProvider({ workDir, ...LANDING_ENCODE, maxConcurrentRenders: 1 });
  await fs.mkdir(LANDING_MEDIA_DIR, { recursive: true });
  try {
    const entries: LandingVideoEntry[] = [];
    for (const spec of LANDING_VIDEOS) {
      const entry = await renderOne(spec, provider);
      entries.push(entry);
      console.log(`[landing media] ${entry.video}: ${entry.effect}, ${entry.width}x${entry.height}, ${entry.durationSeconds.toFixed(2)} s, ${(entry.bytes / 1024).toFixed(0)} KB`);
    }
    const manifest = { generatedBy: 'scripts/landingMedia.ts', videos: entries };
    await fs.writeFile(path.join(LANDING_MEDIA_DIR, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`[landing media] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
