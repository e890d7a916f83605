/**
 * Watermarked clip previews encoded several to one ffmpeg process. Most of a small preview's ffmpeg CPU is the
 * process's start-up (Debian's ffmpeg resolves the symbols of about 200 shared libraries before it reads a byte:
 * about 0.07 s of the 0.11 s a 2 s 160x90 preview costs), so a worker finishing many clips at once starts one ffmpeg
 * for a batch of them: each clip its own inputs (clip and overlay), filter chain and outputs (preview and thumbnail
 * frame), exactly as its own run would make them.
 *
 * A preview waits at most `gatherMs` (250 ms, nothing beside a render of minutes) for others to share its run, less
 * once `maxBatch` are queued; while `concurrency` runs are going, the ones asked for queue, and the next run takes up to
 * `maxBatch` of them (and no more than `maxPixelSeconds` of video, so large local renders are not put together). A batch that fails is run again one
 * preview at a time, so a bad clip fails only itself. A cancelled preview gives up its place at once; a run whose
 * previews are all cancelled is stopped.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { runFfmpeg } from '../providers/media/ffmpeg';
import type { ImageSize } from '../providers/media/images';
import { watermarkOverlayOnce, watermarkVideo, type WatermarkOptions } from './clipMedia';

export interface PreviewJob {
  input: string;
  output: string;
  size: ImageSize;
  options: WatermarkOptions;
}

/** The ffmpeg arguments of one run making every job's preview (and frame, where asked), after their overlays. */
export function batchArguments(jobs: Array<PreviewJob & { overlay: string }>): string[] {
  const inputs: string[] = ['-y'];
  const chains: string[] = [];
  const outputs: string[] = [];
  jobs.forEach((job, i) => {
    inputs.push('-i', job.input, '-i', job.overlay);
    const clip = `[${2 * i}:v]`;
    const mark = (picture: string) => `${picture}[${2 * i + 1}:v]overlay=0:0:format=auto,format=yuv420p[v${i}]`;
    const frame = job.options.frame;
    chains.push(frame ? `${clip}split=2[m${i}][s${i}];${mark(`[m${i}]`)};[s${i}]trim=start=${frame.atSeconds},setpts=PTS-STARTPTS[f${i}]` : mark(clip));
    outputs.push('-map', `[v${i}]`, '-c:v', 'libx264', '-preset', job.options.preset, '-crf', '26', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', '-an', job.output);
    if (frame) outputs.push('-map', `[f${i}]`, '-frames:v', '1', '-c:v', 'png', '-f', 'image2', frame.path);
  });
  return [...inputs, '-filter_complex', chains.join(';'), ...outputs];
}

interface Entry {
  job: PreviewJob;
  resolve: () => void;
  reject: (error: unknown) => void;
  settled: boolean;
  detach: () => void;
  queuedAt: number;
}

export interface PreviewBatcherOptions {
  /** Previews in one ffmpeg run at most (16). */
  maxBatch?: number;
  /** ffmpeg runs at once (1): more is only more processes on the same cores. */
  concurrency?: number;
  /** Width x height x seconds of video in one run at most (one 1080x1920 clip of 5 s). */
  maxPixelSeconds?: number;
  /** How long the oldest queued preview waits for others before its run starts (250 ms; 0: at once). */
  gatherMs?: number;
}

const aborted = () => Object.assign(new Error('preview cancelled'), { name: 'AbortError' });

export class PreviewBatcher {
  private readonly queue: Entry[] = [];
  private running = 0;
  private readonly maxBatch: number;
  private readonly concurrency: number;
  private readonly maxPixelSeconds: number;
  private readonly gatherMs: number;
  private gatherTimer: NodeJS.Timeout | null = null;

  constructor(options: PreviewBatcherOptions = {}) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 16);
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    this.maxPixelSeconds = options.maxPixelSeconds ?? 1080 * 1920 * 5;
    this.gatherMs = Math.max(0, options.gatherMs ?? 250);
  }

  /** Makes `job`'s preview (and frame), alone or in a batch; rejects at once when its signal aborts. */
  encode(job: PreviewJob): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const signal = job.options.signal;
      if (signal?.aborted) {
        reject(aborted());
        return;
      }
      const entry: Entry = {
        job,
        settled: false,
        resolve: () => {
          if (entry.settled) return;
          entry.settled = true;
          entry.detach();
          resolve();
        },
        reject: (error) => {
          if (entry.settled) return;
          entry.settled = true;
          entry.detach();
          reject(error);
        },
        detach: () => undefined,
        queuedAt: Date.now(),
      };
      if (signal) {
        const onAbort = () => {
          const at = this.queue.indexOf(entry);
          if (at >= 0) this.queue.splice(at, 1);
          entry.reject(aborted());
        };
        signal.addEventListener('abort', onAbort, { once: true });
        entry.detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const gatherFor = this.queue[0].queuedAt + this.gatherMs - Date.now();
      if (this.queue.length < this.maxBatch && gatherFor > 0) {
        this.gatherTimer ??= setTimeout(() => {
          this.gatherTimer = null;
          this.pump();
        }, gatherFor);
        return;
      }
      const batch: Entry[] = [];
      let pixelSeconds = 0;
      const preset = this.queue[0].job.options.preset;
      for (let i = 0; i < this.queue.length && batch.length < this.maxBatch; ) {
        const entry = this.queue[i];
        const weight = entry.job.size.width * entry.job.size.height * Math.max(1, entry.job.options.durationSeconds);
        if (entry.job.options.preset !== preset || (batch.length > 0 && pixelSeconds + weight > this.maxPixelSeconds)) {
          i += 1;
          continue;
        }
        batch.push(entry);
        pixelSeconds += weight;
        this.queue.splice(i, 1);
      }
      this.running += 1;
      void this.run(batch).finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }

  private async run(batch: Entry[]): Promise<void> {
    if (batch.length === 1) {
      const [entry] = batch;
      await watermarkVideo(entry.job.input, entry.job.output, entry.job.size, entry.job.options).then(() => entry.resolve(), entry.reject);
      return;
    }
    // the run stops when every preview in it was cancelled
    const stop = new AbortController();
    const detach = batch.map((entry) => {
      const signal = entry.job.options.signal;
      if (!signal) return () => undefined;
      const onAbort = () => {
        if (batch.every((e) => e.job.options.signal?.aborted)) stop.abort();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      return () => signal.removeEventListener('abort', onAbort);
    });
    try {
      const jobs = await Promise.all(
        batch.map(async (entry) => {
          const overlay = path.join(path.dirname(entry.job.output), `${path.basename(entry.job.output)}.overlay.png`);
          await fs.writeFile(overlay, await watermarkOverlayOnce(entry.job.size));
          return { ...entry.job, overlay };
        }),
      );
      try {
        const duration = Math.max(...batch.map((e) => e.job.options.durationSeconds));
        await runFfmpeg(batchArguments(jobs), {
          durationSeconds: duration,
          signal: stop.signal,
          onProgress: (fraction) => {
            for (const entry of batch) if (!entry.settled) entry.job.options.onProgress?.(fraction);
          },
        });
      } finally {
        await Promise.all(jobs.map((job) => fs.rm(job.overlay, { force: true })));
      }
      for (const entry of batch) entry.resolve();
    } catch {
      // one at a time, each with its own outcome (a cancelled one is settled already)
      for (const entry of batch) {
        if (entry.settled) continue;
        await watermarkVideo(entry.job.input, entry.job.output, entry.job.size, entry.job.options).then(() => entry.resolve(), entry.reject);
      }
    } finally {
      for (const off of detach) off();
    }
  }
}

/** The worker's batcher of clip previews. */
export const previewBatcher = new PreviewBatcher();
