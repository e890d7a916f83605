/**
 * Approved clips for assembly tests, made cheaply: a real 5 s H.264 MP4 per clip (ffmpeg's test pattern at a small
 * size), stored where an approval stores a clip, with its thumbnail, and the `clips` row an approval inserts.
 * Clip generation itself is tested elsewhere (tests/clips); here it would only cost minutes.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import sharp from 'sharp';
import type { Storage } from '../../storage';
import { fileUrl } from '../../storage/signedUrls';

const execFileAsync = promisify(execFile);

export interface ClipSpec {
  fileName: string;
  orientation: 'landscape' | 'portrait';
  /** a colour for the thumbnail, so clips can be told apart in screenshots */
  color: string;
}

/** A 5 s, 30 fps test-pattern MP4 at 320x180 (landscape) or 180x320 (portrait). */
export async function testPatternClip(orientation: ClipSpec['orientation'], seconds = 5): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'assembly-clip-'));
  const out = path.join(dir, 'clip.mp4');
  const size = orientation === 'portrait' ? '180x320' : '320x180';
  try {
    await execFileAsync(process.env.FFMPEG_PATH ?? 'ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-y',
      '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=30:duration=${seconds}`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', out,
    ]);
    return await fs.readFile(out);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Inserts approved clips into the user's project, oldest first; answers their ids in the order given. */
export async function insertApprovedClips(knex: Knex, storage: Storage, owner: { userId: string; projectId: string }, specs: readonly ClipSpec[]): Promise<string[]> {
  const ids: string[] = [];
  const base = Date.now() - specs.length * 1000;
  for (const [i, spec] of specs.entries()) {
    const bytes = await testPatternClip(spec.orientation);
    const stem = `${owner.userId}/${owner.projectId}/${randomUUID()}`;
    const filePath = `${stem}.mp4`;
    const thumbPath = `${stem}.jpg`;
    const [w, h] = spec.orientation === 'portrait' ? [180, 320] : [320, 180];
    const thumb = await sharp({ create: { width: w, height: h, channels: 3, background: spec.color } }).jpeg({ quality: 80 }).toBuffer();
    await storage.objects.put('clips', filePath, bytes);
    await storage.objects.put('clips', thumbPath, thumb);
    const aspectRatio = spec.orientation === 'portrait' ? '9:16' : '16:9';
    const [row] = await knex('clips')
      .insert({
        project_id: owner.projectId,
        workspace_id: owner.userId,
        file_url: fileUrl('clips', filePath),
        file_name: spec.fileName,
        storage_bucket: 'clips',
        storage_path: filePath,
        storage_mime: 'video/mp4',
        storage_size: bytes.length,
        thumbnail_path: thumbPath,
        thumbnail_url: fileUrl('clips', thumbPath),
        duration: 5,
        movement: 'Drone Shot',
        camera_movement: 'Drone Shot',
        credits_used: 4,
        file_size: bytes.length,
        analysis_data: JSON.stringify({ aspectRatio, platform: spec.orientation === 'portrait' ? 'TikTok' : 'YouTube', fileSize: bytes.length }),
        created_at: new Date(base + i * 1000),
      })
      .returning('id');
    ids.push((row as { id: string }).id);
  }
  return ids;
}
