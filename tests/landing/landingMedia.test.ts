/**
 * The landing page's committed videos are what scripts/landingMedia.ts makes with the local clip pipeline:
 * the manifest names the still, effect and encoder settings, and each file still matches it (same still, same
 * bytes, a real H.264 clip of the product's clip size and length, a poster of the same size). A changed still
 * or entry without a new render fails here with the command to run.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { CLIP_DURATION_SECONDS, VIDEO_EFFECTS } from '../../domain/constants';
import { CLIP_SIZE } from '../../providers/local/clipEffects';
import { LOCAL_VIDEO_MODEL } from '../../providers/local/video';
import { probeVideo } from '../../providers/media/ffmpeg';
import { LANDING_ENCODE, LANDING_MEDIA_DIR, LANDING_VIDEOS, MANIFEST_FILE, STILLS_DIR, sha256, type LandingVideoEntry } from '../../scripts/landingMedia';

const RERUN = 'run `npm run media:landing` and commit its output';
const manifest = JSON.parse(fs.readFileSync(path.join(LANDING_MEDIA_DIR, MANIFEST_FILE), 'utf8')) as { generatedBy: string; videos: LandingVideoEntry[] };

describe('landing media', () => {
  it('has one entry per video the script renders, with the same still, effect, platform and encoder settings', () => {
    expect(manifest.generatedBy).toBe('scripts/landingMedia.ts');
    expect(manifest.videos.map(({ name, still, effect, platform, aspectRatio }) => ({ name, still, effect, platform, aspectRatio }))).toEqual(LANDING_VIDEOS);
    for (const entry of manifest.videos) {
      expect(VIDEO_EFFECTS).toContain(entry.effect);
      expect(entry.model).toBe(LOCAL_VIDEO_MODEL);
      expect(entry.encode).toEqual(LANDING_ENCODE);
    }
  });

  it.each(LANDING_VIDEOS.map((v) => v.name))('%s: the still and the video are the ones the manifest was made from', (name) => {
    const entry = manifest.videos.find((v) => v.name === name)!;
    const still = fs.readFileSync(path.join(STILLS_DIR, entry.still));
    expect({ still: entry.still, sha256: sha256(still) }).toEqual({ still: entry.still, sha256: entry.stillSha256 });
    const video = fs.readFileSync(path.join(LANDING_MEDIA_DIR, entry.video));
    if (sha256(video) !== entry.videoSha256) throw new Error(`${entry.video} is not the rendered file in ${MANIFEST_FILE}: ${RERUN}`);
    expect(video.length).toBe(entry.bytes);
    // small enough for a landing page
    expect(video.length).toBeLessThan(1024 * 1024);
  });

  it.each(LANDING_VIDEOS.map((v) => v.name))('%s: a 5 s H.264 clip at the clip size of its aspect, with a poster of the same size', async (name) => {
    const entry = manifest.videos.find((v) => v.name === name)!;
    const probe = await probeVideo(path.join(LANDING_MEDIA_DIR, entry.video));
    const size = CLIP_SIZE[entry.aspectRatio];
    expect(probe).toMatchObject({ codec: 'h264', width: size.width, height: size.height, pixelFormat: 'yuv420p' });
    expect(probe.durationSeconds).toBeCloseTo(CLIP_DURATION_SECONDS, 1);
    expect({ width: entry.width, height: entry.height }).toEqual(size);
    const poster = await sharp(path.join(LANDING_MEDIA_DIR, entry.poster)).metadata();
    expect({ format: poster.format, width: poster.width, height: poster.height }).toEqual({ format: 'webp', ...size });
  });
});
