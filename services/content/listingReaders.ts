/**
 * Threads that read the content tables and build a project's listing (or a page of it) as the JSON bytes the API
 * answers, off the API's event loop (issue 16).
 *
 * Why: a fresh 1000-item listing is about 20 ms of one core (pg's row parsing, the items, JSON.stringify, their
 * garbage), and the API process has one JavaScript thread, so `?refresh=1` was bound by one core while the machine
 * had more, and each build held up every other request for its 20 ms. Each reader thread has its own small
 * database pool and storage signer and answers with the bytes, transferred (not copied) to the API thread, which
 * keeps everything else: the ownership check, the 5 s reuse and its invalidation, compression, the answer.
 *
 * The bytes are the ones `listingBody`/`pageBody` (services/content/library.ts) make in the API thread: the same functions
 * run in the thread. A read that fails in a thread (its error arrives as a plain Error with the message) or whose
 * thread dies (ListingReaderGoneError) is made again by the library in the API thread, which then answers as it
 * always did. A thread that dies is replaced; one that cannot start (it exits before it is ready) is not, and its
 * share of the reads goes to the others or, with none left, to the API thread. Reads go to ready threads only: until
 * one has loaded its modules (seconds on a busy machine, just after the API started), the API thread reads.
 */
import type { Worker } from 'node:worker_threads';
import path from 'node:path';
import type { Logger } from '../../config/logger';
import type { StorageConfig } from '../../storage';
import type { ContentPageKey } from './contentCursor';
import { asBuffer, startTypeScriptThread } from '../platform/workerThreads';

export class ListingReaderGoneError extends Error {
  constructor(reason: string) {
    super(`content listing reader thread gone: ${reason}`);
    this.name = 'ListingReaderGoneError';
  }
}

/**
 * No thread has finished starting yet (it loads its modules, transpiled on first use, which on a busy machine takes
 * seconds): the read is the API thread's rather than waiting behind a thread's start.
 */
export class ListingReaderNotReadyError extends Error {
  constructor() {
    super('no content listing reader thread is ready yet');
    this.name = 'ListingReaderNotReadyError';
  }
}

/** What a reader thread is asked: the whole listing, or a page of it. */
export type ListingRequest = { kind: 'listing'; projectId: string } | { kind: 'page'; projectId: string; limit: number; after: ContentPageKey | null };

/** Messages between the API thread and a reader thread (services/content/listingReaderThread.ts). */
export type ReaderInbound = ({ id: number } & ListingRequest) | { id: 0; kind: 'close' };
export type ReaderOutbound = { id: 0; ready: true } | { id: number; body: Uint8Array } | { id: number; error: { message: string; stack?: string } };

/** What a reader thread is started with. */
export interface ReaderThreadData {
  databaseUrl: string;
  storage: StorageConfig;
  /** the thread's database pool size */
  poolMax: number;
  /** how long a new connection waits for a server not taking connections yet (db/reconnect.ts's default unless set) */
  reconnectWaitMs?: number;
}

export interface ListingReadersOptions extends ReaderThreadData {
  threads: number;
  logger: Pick<Logger, 'warn' | 'error'>;
}

export interface ListingReadersStats {
  /** threads running now */
  threads: number;
  /** reads a thread answered with the bytes */
  answered: number;
  /** reads a thread failed (the library makes them again in the API thread) */
  failed: number;
}

export interface ListingReaders {
  listing: (projectId: string) => Promise<Buffer>;
  page: (projectId: string, limit: number, after: ContentPageKey | null) => Promise<Buffer>;
  stats: () => ListingReadersStats;
  /** Settles once every thread started so far is ready or has exited (tests and benchmarks that measure the threads). */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

const THREAD_ENTRY = path.join(__dirname, 'listingReaderThread.ts');

interface Pending {
  resolve: (body: Buffer) => void;
  reject: (err: Error) => void;
}

interface ReaderThread {
  worker: Worker;
  pending: Map<number, Pending>;
  ready: boolean;
  /** settles when the thread is ready or has exited */
  started: Promise<void>;
}

export function createListingReaders(options: ListingReadersOptions): ListingReaders {
  const { logger } = options;
  const data: ReaderThreadData = { databaseUrl: options.databaseUrl, storage: options.storage, poolMax: options.poolMax, reconnectWaitMs: options.reconnectWaitMs };
  const threads = new Set<ReaderThread>();
  let nextId = 1;
  let closing = false;
  let answered = 0;
  let failed = 0;

  const start = (): void => {
    const worker = startTypeScriptThread(THREAD_ENTRY, { ...data });
    let started = (): void => undefined;
    const thread: ReaderThread = { worker, pending: new Map(), ready: false, started: new Promise<void>((resolve) => (started = resolve)) };
    threads.add(thread);
    worker.on('message', (message: ReaderOutbound) => {
      if ('ready' in message) {
        thread.ready = true;
        started();
        return;
      }
      const pending = thread.pending.get(message.id);
      if (!pending) return;
      thread.pending.delete(message.id);
      if ('body' in message) {
        answered += 1;
        pending.resolve(asBuffer(message.body));
      } else {
        failed += 1;
        pending.reject(Object.assign(new Error(message.error.message), { stack: message.error.stack }));
      }
    });
    worker.on('error', (err) => logger.error({ err }, 'content listing reader thread failed'));
    worker.on('exit', (code) => {
      started();
      threads.delete(thread);
      for (const pending of thread.pending.values()) pending.reject(new ListingReaderGoneError(`exited with ${code}`));
      thread.pending.clear();
      if (closing) return;
      // one that never got ready would fail again the same way: its reads go to the others (or the API thread)
      if (thread.ready) start();
      else logger.warn({ code }, 'content listing reader thread could not start; listings are read by the others or the API thread');
    });
  };

  for (let i = 0; i < options.threads; i += 1) start();

  const ask = (request: ListingRequest): Promise<Buffer> => {
    if (closing || threads.size === 0) return Promise.reject(new ListingReaderGoneError(closing ? 'closing' : 'none running'));
    // the ready thread with the fewest reads under way: a read sent to a thread still starting would wait for its start
    let chosen: ReaderThread | undefined;
    for (const thread of threads) if (thread.ready && (!chosen || thread.pending.size < chosen.pending.size)) chosen = thread;
    if (!chosen) return Promise.reject(new ListingReaderNotReadyError());
    const thread = chosen;
    const id = nextId++;
    return new Promise<Buffer>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, ...request } satisfies ReaderInbound);
    });
  };

  return {
    listing: (projectId) => ask({ kind: 'listing', projectId }),
    page: (projectId, limit, after) => ask({ kind: 'page', projectId, limit, after }),
    stats: () => ({ threads: threads.size, answered, failed }),
    ready: async () => {
      await Promise.all([...threads].map((thread) => thread.started));
    },
    async close() {
      closing = true;
      await Promise.all(
        [...threads].map(
          (thread) =>
            new Promise<void>((resolve) => {
              thread.worker.once('exit', () => resolve());
              // the thread closes its pool and ends; one that does not within 5 s is stopped
              thread.worker.postMessage({ id: 0, kind: 'close' } satisfies ReaderInbound);
              setTimeout(() => void thread.worker.terminate(), 5000).unref();
            }),
        ),
      );
    },
  };
}
