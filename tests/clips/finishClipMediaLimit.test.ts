/**
 * A worker with fal runs up to 100 media-queue activities, mostly downloads; the thumbnail and preview encodes of
 * finishing clips run MEDIA_CPU_CONCURRENCY at a time (the cores) and the rest wait their turn, so a few clips finish
 * at a time instead of all of them late together (found by the capacity bench with a worker held to 0.6 CPU: 100
 * encodes at once and no clip finished in 20 minutes). Real ffmpeg on a real clip; the encodes are watched as
 * processes, since they run as children of this one.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Knex } from 'knex';
import { clipFolder, createClipActivities } from '../../activities/clipGeneration';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { FFMPEG } from '../../providers/media/ffmpeg';
import { createStorage } from '../../storage';
import { createFundedProfile } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';

jest.setTimeout(120_000);

const config = loadConfig();
const storage = createStorage(config);
let knex: Knex;
let clipFile: string;
let scratch: string;

beforeAll(() => {
  knex = testKnex();
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'finish-limit-'));
  clipFile = path.join(scratch, 'clip.mp4');
  // 3 s at 640x360: long enough that two previews encoding at once are seen at once
  execFileSync(FFMPEG, ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clipFile]);
});

afterAll(async () => {
  fs.rmSync(scratch, { recursive: true, force: true });
  await closeTestKnex();
});

/** A processing clip job with its stored clip, as the wait step leaves it. */
async function storedClip(): Promise<{ jobId: string; userId: string; clipPath: string }> {
  const profile = await createFundedProfile(knex, 10);
  const [project] = await knex('projects').insert({ user_id: profile.id, name: 'Finish' }).returning<{ id: string }[]>('id');
  const jobId = randomUUID();
  await knex('video_generation_jobs').insert({ id: jobId, user_id: profile.id, project_id: project.id, status: 'processing', workflow_id: `clip-${jobId}` });
  const clipPath = `${clipFolder(profile.id, jobId)}/clip.mp4`;
  await storage.objects.put('clips', clipPath, fs.createReadStream(clipFile));
  return { jobId, userId: profile.id, clipPath };
}

/** The most ffmpeg processes that are children of this one at any moment while `work` runs (sampled every 20 ms). */
async function mostEncodesAtOnce(work: () => Promise<unknown>): Promise<number> {
  let most = 0;
  const sample = () => {
    const children = fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((pid) => {
        try {
          const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          return ppid === process.pid && stat.includes('(ffmpeg)');
        } catch {
          return false;
        }
      });
    most = Math.max(most, children.length);
  };
  const timer = setInterval(sample, 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return most;
}

async function finishTogether(mediaCpuConcurrency: number, clips: number): Promise<number> {
  const activities = createClipActivities({ knex, storage, logger, config: { ...config, mediaCpuConcurrency }, providers: { imageToVideo: {} as never } }, { heartbeatIntervalMs: 1000 });
  const jobs = await Promise.all(Array.from({ length: clips }, () => storedClip()));
  const most = await mostEncodesAtOnce(() =>
    Promise.all(jobs.map((job) => new MockActivityEnvironment().run(activities.finishClipMedia, { ...job, width: 640, height: 360 }))),
  );
  for (const job of jobs) {
    const folder = clipFolder(job.userId, job.jobId);
    expect(await storage.objects.stat('clips', `${folder}/preview.mp4`)).not.toBeNull();
    expect(await storage.objects.stat('clips', `${folder}/thumbnail.webp`)).not.toBeNull();
  }
  return most;
}

test('one encode at a time when MEDIA_CPU_CONCURRENCY is 1: every clip still gets its thumbnail and preview', async () => {
  expect(await finishTogether(1, 4)).toBe(1);
});

test('two at a time when it is 2', async () => {
  expect(await finishTogether(2, 4)).toBe(2);
});
