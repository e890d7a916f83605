/**
 * Local image-to-video: ffmpeg renders each effect from the still (providers/local/clipEffects.ts).
 *
 * Shape of a job, so a workflow can keep the job id and a retried activity resumes instead of redoing:
 * - `submit` is cheap: it prepares the still for the aspect (sharp cover crop) and saves it with the
 *   request in `<workDir>/<jobId>/`. Nothing renders yet.
 * - `wait` renders, inside the activity that heartbeats, so the worker's activity slots bound how many
 *   ffmpeg processes run and an activity cancellation stops ffmpeg. A process claims the job with an
 *   exclusive `owner.json` (pid + instance id); another `wait` for the same job, in this or another
 *   process on the machine, follows the owner's `progress.json` instead of rendering twice. A claim
 *   whose process is gone is stale and taken over: after a worker crash the retry simply renders again
 *   (local renders cost nothing but time).
 * - The result stays in the job folder until `release(jobId)`.
 * Renders in one provider instance share `maxConcurrentRenders` slots; waiting ones report 'queued'.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { CLIP_FPS } from '../../domain/constants';
import type {
  ImageToVideoProvider,
  VideoJobHandle,
  VideoJobRequest,
  VideoJobStatus,
  VideoProgress,
  VideoResult,
  VideoWaitOptions,
} from '../types';
import { ProviderError } from '../errors';
import { checkVideoJobRequest } from '../videoRequest';
import { prepareStillForAspect, type ImageSize } from '../media/images';
import { probeVideo, runFfmpeg, type FfmpegRunStats, type VideoProbe } from '../media/ffmpeg';
import { clipFfmpegArgs, sourceSize } from './clipEffects';

export const LOCAL_VIDEO_MODEL = 'local/ffmpeg-effects';

export interface LocalVideoOptions {
  workDir: string;
  /** x264 preset (default 'veryfast'). */
  preset?: string;
  crf?: number;
  fps?: number;
  maxConcurrentRenders?: number;
  /** How often a follower reads another process's progress (ms). */
  followIntervalMs?: number;
}

type SavedRequest = Omit<VideoJobRequest, 'image'> & { createdAt: string };
type SavedResult = Omit<VideoResult, 'path'>;
interface Owner {
  pid: number;
  instance: string;
}

const JOB_ID = /^local-[0-9a-f-]{36}$/;

/**
 * The still the render reads. ffmpeg cover-crops it to the aspect itself, once, before the loop
 * (clipEffects.ts), so a plain JPEG (sRGB, 3 channels, upright) goes in as it is: no decode and JPEG
 * re-encode here, and no second lossy generation. Anything else (EXIF-rotated, alpha, CMYK, grey, PNG,
 * WebP) is framed by sharp first, as before.
 */
async function stillForRender(image: Buffer, size: ImageSize): Promise<Buffer> {
  const meta = await sharp(image).metadata();
  const plainJpeg = meta.format === 'jpeg' && meta.channels === 3 && meta.space === 'srgb' && !meta.hasAlpha && (meta.orientation ?? 1) === 1;
  return plainJpeg ? image : prepareStillForAspect(image, size);
}

/**
 * What the clip is, from the ffmpeg run that wrote it (its output header and frame count) instead of a second
 * process (ffprobe); null when the run did not report it, and the caller probes the file.
 */
function facts(stats: FfmpegRunStats): Omit<VideoProbe, 'frames'> | null {
  const video = stats.outputVideo;
  if (!video || !stats.frames || !video.fps) return null;
  return { codec: video.codec, width: video.width, height: video.height, fps: video.fps, durationSeconds: stats.frames / video.fps, pixelFormat: video.pixelFormat };
}
const INSTANCE = randomUUID();

async function readJson<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  await fs.writeFile(temp, JSON.stringify(value));
  await fs.rename(temp, file);
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** First-come slots for renders in this process. */
class RenderSlots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly size: number) {}

  position(waiter: () => void): number {
    return this.waiting.indexOf(waiter) + 1;
  }

  async acquire(onQueued: (position: number) => void, signal?: AbortSignal): Promise<void> {
    if (this.active < this.size) {
      this.active += 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new ProviderError('ABORTED', 'Stopped waiting for a render slot'));
      };
      this.waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      onQueued(this.position(waiter));
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active -= 1;
  }
}

export class LocalImageToVideoProvider implements ImageToVideoProvider {
  private readonly options: Required<LocalVideoOptions>;
  private readonly slots: RenderSlots;
  /** Renders running in this process, by job id: cancel and release stop them. */
  private readonly renders = new Map<string, AbortController>();

  constructor(options: LocalVideoOptions) {
    this.options = {
      workDir: options.workDir,
      preset: options.preset ?? 'veryfast',
      crf: options.crf ?? 20,
      fps: options.fps ?? CLIP_FPS,
      maxConcurrentRenders: options.maxConcurrentRenders ?? Math.max(1, Math.floor(os.availableParallelism() / 2)),
      followIntervalMs: options.followIntervalMs ?? 1000,
    };
    this.slots = new RenderSlots(this.options.maxConcurrentRenders);
  }

  private dir(jobId: string): string {
    if (!JOB_ID.test(jobId)) throw new ProviderError('UNKNOWN_JOB', `"${jobId}" is not a local video job id`);
    return path.join(this.options.workDir, jobId);
  }

  async submit(request: VideoJobRequest): Promise<VideoJobHandle> {
    checkVideoJobRequest(request);
    const jobId = `local-${randomUUID()}`;
    const dir = this.dir(jobId);
    await fs.mkdir(dir, { recursive: true });
    let still: Buffer;
    try {
      still = await stillForRender(request.image, sourceSize(request.aspectRatio));
    } catch (cause) {
      await fs.rm(dir, { recursive: true, force: true });
      throw new ProviderError('INPUT', `The source image could not be prepared: ${(cause as Error).message}`, { cause });
    }
    await fs.writeFile(path.join(dir, 'source.jpg'), still);
    const saved: SavedRequest = {
      effect: request.effect,
      platform: request.platform,
      aspectRatio: request.aspectRatio,
      durationSeconds: request.durationSeconds,
      prompt: request.prompt,
      createdAt: new Date().toISOString(),
    };
    // written last: its presence means the submission is complete
    await writeJsonAtomic(path.join(dir, 'request.json'), saved);
    return { jobId };
  }

  async status(jobId: string): Promise<VideoJobStatus> {
    const dir = this.dir(jobId);
    const request = await readJson<SavedRequest>(path.join(dir, 'request.json'));
    if (!request) throw new ProviderError('UNKNOWN_JOB', `Local video job ${jobId} is unknown here (released, or submitted on another machine)`);
    const progress = (await readJson<{ progress: number }>(path.join(dir, 'progress.json')))?.progress ?? 0;
    if (await readJson<SavedResult>(path.join(dir, 'result.json'))) return { state: 'completed', progress: 100, message: 'Clip ready' };
    if (await exists(path.join(dir, 'cancelled'))) return { state: 'cancelled', progress, message: 'Cancelled' };
    const failed = await readJson<{ error: string }>(path.join(dir, 'failed.json'));
    if (failed) return { state: 'failed', progress, message: 'Render failed', error: failed.error };
    const owner = await readJson<Owner>(path.join(dir, 'owner.json'));
    if (owner && this.ownerAlive(owner)) return { state: 'running', progress, message: `Rendering ${request.effect}: ${progress}%` };
    return { state: 'queued', progress: 0, message: 'Waiting to render' };
  }

  async wait(jobId: string, options: VideoWaitOptions = {}): Promise<VideoResult> {
    const dir = this.dir(jobId);
    const request = await readJson<SavedRequest>(path.join(dir, 'request.json'));
    if (!request) throw new ProviderError('UNKNOWN_JOB', `Local video job ${jobId} is unknown here (released, or submitted on another machine)`);
    for (;;) {
      if (options.signal?.aborted) throw new ProviderError('ABORTED', `Stopped waiting for ${jobId}`);
      const done = await this.finished(jobId, dir);
      if (done) return done;
      if (await this.claim(dir)) {
        try {
          return await this.render(jobId, dir, request, options);
        } finally {
          await fs.rm(path.join(dir, 'owner.json'), { force: true });
        }
      }
      // another live process renders it: follow its progress
      const progress = (await readJson<{ progress: number }>(path.join(dir, 'progress.json')))?.progress ?? 0;
      await options.onProgress?.({ state: 'running', progress, message: `Rendering ${request.effect}: ${progress}%` });
      await sleep(this.options.followIntervalMs, options.signal);
    }
  }

  async cancel(jobId: string): Promise<void> {
    const dir = this.dir(jobId);
    if (!(await exists(path.join(dir, 'request.json')))) throw new ProviderError('UNKNOWN_JOB', `Local video job ${jobId} is unknown here`);
    if (await exists(path.join(dir, 'result.json'))) return;
    await fs.writeFile(path.join(dir, 'cancelled'), new Date().toISOString());
    this.renders.get(jobId)?.abort();
  }

  async release(jobId: string): Promise<void> {
    const dir = this.dir(jobId);
    this.renders.get(jobId)?.abort();
    await fs.rm(dir, { recursive: true, force: true });
  }

  /** The terminal outcome on disk, if any: a result, or the error for a cancelled or failed job. */
  private async finished(jobId: string, dir: string): Promise<VideoResult | null> {
    const result = await readJson<SavedResult>(path.join(dir, 'result.json'));
    if (result) return { ...result, path: path.join(dir, 'result.mp4') };
    if (await exists(path.join(dir, 'cancelled'))) throw new ProviderError('JOB_CANCELLED', `Video job ${jobId} was cancelled`);
    const failed = await readJson<{ error: string }>(path.join(dir, 'failed.json'));
    if (failed) throw new ProviderError('JOB_FAILED', `Video job ${jobId} failed: ${failed.error}`);
    return null;
  }

  private ownerAlive(owner: Owner): boolean {
    if (owner.pid === process.pid) return owner.instance === INSTANCE;
    return processAlive(owner.pid);
  }

  /** Takes the job's exclusive claim, replacing a stale one. */
  private async claim(dir: string): Promise<boolean> {
    const file = path.join(dir, 'owner.json');
    const mine: Owner = { pid: process.pid, instance: INSTANCE };
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await fs.writeFile(file, JSON.stringify(mine), { flag: 'wx' });
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = await readJson<Owner>(file).catch(() => null);
      if (owner && this.ownerAlive(owner)) return false;
      await fs.rm(file, { force: true });
    }
    return false;
  }

  private async render(jobId: string, dir: string, request: SavedRequest, options: VideoWaitOptions): Promise<VideoResult> {
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort();
    options.signal?.addEventListener('abort', onOuterAbort, { once: true });
    this.renders.set(jobId, controller);
    // a throwing progress callback (the caller's heartbeat) stops the render and is what `wait` rethrows
    let callbackError: unknown = null;
    const report = async (progress: VideoProgress) => {
      try {
        await options.onProgress?.(progress);
      } catch (error) {
        callbackError ??= error;
        controller.abort();
      }
    };
    try {
      await this.slots.acquire((position) => {
        void report({ state: 'queued', progress: 0, message: `Waiting for a render slot (${position} ahead)`, queuePosition: position });
      }, controller.signal);
    } catch (error) {
      this.renders.delete(jobId);
      options.signal?.removeEventListener('abort', onOuterAbort);
      throw callbackError ?? (await this.abortReason(jobId, dir, error));
    }
    const partial = path.join(dir, `render-${process.pid}-${randomUUID()}.mp4`);
    try {
      await report({ state: 'running', progress: 0, message: `Rendering ${request.effect}: 0%` });
      if (callbackError) throw callbackError;
      let lastWrite = 0;
      let progressWrites = Promise.resolve();
      const stats = await runFfmpeg(
        clipFfmpegArgs({
          source: path.join(dir, 'source.jpg'),
          output: partial,
          effect: request.effect,
          aspectRatio: request.aspectRatio,
          durationSeconds: request.durationSeconds,
          fps: this.options.fps,
          preset: this.options.preset,
          crf: this.options.crf,
        }),
        {
          durationSeconds: request.durationSeconds,
          signal: controller.signal,
          onProgress: (fraction) => {
            const progress = Math.min(99, Math.floor(fraction * 100));
            const now = Date.now();
            if (now - lastWrite >= 250) {
              lastWrite = now;
              progressWrites = progressWrites.then(() => writeJsonAtomic(path.join(dir, 'progress.json'), { progress })).catch(() => undefined);
            }
            void report({ state: 'running', progress, message: `Rendering ${request.effect}: ${progress}%` });
          },
        },
      );
      await progressWrites;
      const probe = facts(stats) ?? (await probeVideo(partial));
      const size = (await fs.stat(partial)).size;
      const target = path.join(dir, 'result.mp4');
      await fs.rename(partial, target);
      const saved: SavedResult = {
        mime: 'video/mp4',
        width: probe.width,
        height: probe.height,
        durationSeconds: probe.durationSeconds,
        fps: probe.fps,
        sizeBytes: size,
        model: LOCAL_VIDEO_MODEL,
        stats: { wallMs: stats.wallMs, encoderUserSeconds: stats.userSeconds, encoderSystemSeconds: stats.systemSeconds },
      };
      await writeJsonAtomic(path.join(dir, 'result.json'), saved);
      await writeJsonAtomic(path.join(dir, 'progress.json'), { progress: 100 });
      return { ...saved, path: target };
    } catch (error) {
      await fs.rm(partial, { force: true });
      if (callbackError) throw callbackError;
      if (controller.signal.aborted) throw await this.abortReason(jobId, dir, error);
      const message = error instanceof Error ? error.message : String(error);
      // the same still and filter would fail the same way: record it so status and retries see it
      await writeJsonAtomic(path.join(dir, 'failed.json'), { error: message }).catch(() => undefined);
      throw new ProviderError('JOB_FAILED', `Video job ${jobId} failed: ${message}`, { cause: error });
    } finally {
      this.slots.release();
      this.renders.delete(jobId);
      options.signal?.removeEventListener('abort', onOuterAbort);
    }
  }

  private async abortReason(jobId: string, dir: string, cause: unknown): Promise<ProviderError> {
    if (await exists(path.join(dir, 'cancelled'))) return new ProviderError('JOB_CANCELLED', `Video job ${jobId} was cancelled`, { cause });
    return new ProviderError('ABORTED', `Stopped rendering ${jobId}`, { cause });
  }
}
