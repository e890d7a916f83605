/**
 * The worker's image thread: `ImageWork` (activities/imageWork.ts) run in one worker thread of its own, so the image
 * buffers of every job live and die on that thread's small heap instead of the worker's (issue 16: in the image edit
 * bench, the overhead over the direct pipeline at p50 went from 109-168 ms to 92-146 ms; README, "the image thread").
 *
 * One thread is enough: the pixels are computed by libvips on its own pool of threads, shared by the whole process,
 * and the thread's JavaScript only passes buffers between sharp calls, so jobs on the media queue run side by side in
 * it. Arguments are copied to the thread (the caller keeps using its buffers); results come back with their bytes in
 * the transfer list.
 *
 * Failures: a task's error comes back as the same error (a provider's `ProviderError` with its code, so the
 * breaker and the activity judge it as before; any other as an Error with its name and message). If the thread dies
 * while tasks run, they fail with ImageThreadGoneError, and Temporal retries their activity; the next task starts a
 * new thread. close() lets the tasks under way finish: a thread stopped in the middle of a sharp call can take the
 * process down with it (lovell/sharp#2263). A thread that cannot start at all (it ends before saying it is ready) is
 * not tried again: its tasks and all later ones run on the worker's own thread, as with IMAGE_THREAD=off, and a
 * warning says so.
 */
import type { Worker } from 'node:worker_threads';
import path from 'node:path';
// loaded here first: a native module that only threads load is unloaded (glibc dlclose) when one of them ends, under
// the others still using it (lovell/sharp#2263)
import 'sharp';
import type { Logger } from '../config/logger';
import { ProviderError, type ProviderErrorCode } from '../providers/errors';
import type { GeneratedImage, ImageEditRequest, UpscaleRequest } from '../providers/types';
import { asBuffer, startTypeScriptThread } from '../services/platform/workerThreads';
import { imageTasks, mapBytes, type ImageTaskName, type ImageTasks, type ImageThreadInbound, type ImageThreadOutbound, type ImageWork } from './imageWork';

export class ImageThreadGoneError extends Error {
  constructor(reason: string) {
    super(`image thread gone: ${reason}`);
    this.name = 'ImageThreadGoneError';
  }
}

export interface ImageThreadOptions {
  logger: Pick<Logger, 'warn' | 'error'>;
  /** The thread's module; tests give another. */
  entry?: string;
}

export interface ImageThreadStats {
  /** the thread running now: 1 or 0 */
  threads: number;
  /** threads started so far */
  started: number;
  /** tasks the thread answered (a task's own error included) */
  answered: number;
  /** tasks that failed because the thread ended under them */
  lost: number;
  /** tasks run on the worker's own thread because no thread could start */
  inProcess: number;
}

type TaskResult<K extends ImageTaskName> = Awaited<ReturnType<ImageTasks[K]>>;
type TaskArg<K extends ImageTaskName> = Parameters<ImageTasks[K]>[0];

interface Pending {
  task: ImageTaskName;
  arg: unknown;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

const DEFAULT_ENTRY = path.join(__dirname, 'imageThreadEntry.ts');
/** How long close() waits for the tasks under way. */
const CLOSE_GRACE_MS = 10_000;

function revivedError(error: Extract<ImageThreadOutbound, { error: unknown }>['error']): Error {
  const revived = error.code
    ? new ProviderError(error.code as ProviderErrorCode, error.message, { httpStatus: error.httpStatus })
    : Object.assign(new Error(error.message), { name: error.name });
  if (error.stack) revived.stack = error.stack;
  return revived;
}

export class ImageThread implements ImageWork {
  // bound like inProcessImageWork's plain functions, so either can be passed around or destructured
  readonly readSourceImage = (filePath: string): Promise<Buffer> => this.run('readSourceImage', filePath);
  readonly watermarkPreview = (image: Buffer): Promise<{ data: Buffer; width: number; height: number }> => this.run('watermarkPreview', image);
  readonly imageThumbnail = (image: Buffer): Promise<Buffer> => this.run('imageThumbnail', image);
  readonly imageEdit = { edit: (request: ImageEditRequest): Promise<GeneratedImage> => this.run('edit', request) };
  readonly upscale = { upscale: (request: UpscaleRequest): Promise<GeneratedImage> => this.run('upscale', request) };

  private readonly entry: string;
  private readonly logger: ImageThreadOptions['logger'];
  private worker: Worker | null = null;
  private ready = false;
  private cannotStart = false;
  private closed = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly counts: Omit<ImageThreadStats, 'threads'> = { started: 0, answered: 0, lost: 0, inProcess: 0 };

  constructor(options: ImageThreadOptions) {
    this.logger = options.logger;
    this.entry = options.entry ?? DEFAULT_ENTRY;
  }

  /** Starts the thread ahead of the first task (its start-up, about half a second, is then not a job's). */
  start(): void {
    if (!this.worker && !this.cannotStart && !this.closed) this.spawn();
  }

  stats(): ImageThreadStats {
    return { threads: this.worker ? 1 : 0, ...this.counts };
  }

  /**
   * Takes no more tasks; those under way finish and answer, then the thread ends. One still busy after
   * CLOSE_GRACE_MS is stopped, and what it had fails with ImageThreadGoneError.
   */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (worker) {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ id: 0, close: true } satisfies ImageThreadInbound);
      const stop = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
      await exited;
      clearTimeout(stop);
    }
    this.failPending(new ImageThreadGoneError('closed'));
  }

  private run<K extends ImageTaskName>(task: K, arg: TaskArg<K>): Promise<TaskResult<K>> {
    if (this.closed) return Promise.reject(new ImageThreadGoneError('closed'));
    if (this.cannotStart) return this.runInProcess(task, arg);
    this.start();
    const worker = this.worker as Worker;
    const id = this.nextId++;
    if (this.pending.size === 0) worker.ref();
    return new Promise<TaskResult<K>>((resolve, reject) => {
      this.pending.set(id, { task, arg, resolve: resolve as (value: unknown) => void, reject });
      // copied, not moved: the caller may still be using these buffers (the preview and the thumbnail share one)
      worker.postMessage({ id, task, arg } satisfies ImageThreadInbound);
    });
  }

  private runInProcess<K extends ImageTaskName>(task: K, arg: TaskArg<K>): Promise<TaskResult<K>> {
    this.counts.inProcess += 1;
    return (imageTasks[task] as (a: TaskArg<K>) => Promise<TaskResult<K>>)(arg);
  }

  private spawn(): void {
    const worker = startTypeScriptThread(this.entry);
    this.worker = worker;
    this.ready = false;
    this.counts.started += 1;
    worker.unref();
    worker.on('message', (message: ImageThreadOutbound) => {
      if ('ready' in message) {
        this.ready = true;
        return;
      }
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.settled(message.id);
      this.counts.answered += 1;
      if ('result' in message) pending.resolve(mapBytes(message.result, asBuffer));
      else pending.reject(revivedError(message.error));
    });
    worker.on('error', (err) => this.logger.error({ err }, 'image thread failed'));
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      if (this.closed) return;
      if (this.ready) {
        this.failPending(new ImageThreadGoneError(`exited with code ${code}`));
        return;
      }
      // it never got ready: it would fail the same way again, so the work stays on this thread from now on
      this.cannotStart = true;
      this.logger.warn({ code }, "image thread could not start; image work runs on the worker's own thread");
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const task of waiting) this.runInProcess(task.task, task.arg as never).then(task.resolve, task.reject);
    });
  }

  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
  }

  private failPending(error: Error): void {
    const lost = [...this.pending.values()];
    this.pending.clear();
    this.counts.lost += lost.length;
    for (const task of lost) task.reject(error);
  }
}
