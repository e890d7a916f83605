/**
 * What the app's own worker threads share (the API's listing readers, the worker's image thread): starting a thread
 * on a TypeScript entry, and handing bytes to another thread without a second copy.
 */
import { Worker } from 'node:worker_threads';

// tsx's CommonJS hook in the thread (it has neither the process's `--import tsx` nor jest's transform), then the entry
const THREAD_BOOT = `require('tsx/cjs/api').register(); require(require('node:worker_threads').workerData.entry);`;

/** A thread running the TypeScript module `entry`; `data` reaches it as workerData beside `entry`. */
export function startTypeScriptThread(entry: string, data: Record<string, unknown> = {}): Worker {
  return new Worker(THREAD_BOOT, { eval: true, execArgv: [], workerData: { entry, ...data } });
}

/**
 * Bytes ready for `postMessage(message, [bytes.buffer])`: a buffer of its own memory moves to the other thread as
 * it is; one inside Node's shared pool (small Buffers) is copied out first, so the pool is never detached.
 */
export function transferableBytes(body: Uint8Array): Uint8Array {
  const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
  return own ? body : Uint8Array.prototype.slice.call(body);
}

/** A Buffer over bytes that arrived from another thread (structured clone makes them a plain Uint8Array). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
