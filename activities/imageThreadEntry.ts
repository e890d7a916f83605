/**
 * The image thread (activities/imageThread.ts): runs the named task of `imageTasks` on what it is sent and answers
 * with the result, its bytes in the transfer list, or with the error's name, message and, for a provider's error,
 * its code. Asked to close, it answers what is under way, then ends.
 */
import { parentPort } from 'node:worker_threads';
import { ProviderError } from '../providers/errors';
import { asBuffer, transferableBytes } from '../services/platform/workerThreads';
import { buffersOf, imageTasks, mapBytes, type ImageThreadInbound, type ImageThreadOutbound } from './imageWork';

const port = parentPort;
if (!port) throw new Error('imageThreadEntry runs as a worker thread');

type AnyTask = (arg: unknown) => Promise<unknown>;

let running = 0;
let closing = false;
// asked to close: the tasks under way finish and answer, then the port closes and the thread ends on its own
// (a thread stopped in the middle of a sharp call can take the whole process down)
const closeWhenIdle = (): void => {
  if (closing && running === 0) port.close();
};

port.on('message', (message: ImageThreadInbound) => {
  if ('close' in message) {
    closing = true;
    closeWhenIdle();
    return;
  }
  running += 1;
  const task = imageTasks[message.task] as AnyTask | undefined;
  const made = task ? task(mapBytes(message.arg, asBuffer)) : Promise.reject(new Error(`unknown image task ${String(message.task)}`));
  made.then(
    (value) => {
      const result = mapBytes(value, transferableBytes);
      port.postMessage({ id: message.id, result } satisfies ImageThreadOutbound, buffersOf(result).map((bytes) => bytes.buffer as ArrayBuffer));
    },
    (err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      const provider = error instanceof ProviderError ? { code: error.code, httpStatus: error.httpStatus } : {};
      port.postMessage({ id: message.id, error: { name: error.name, message: error.message, stack: error.stack, ...provider } } satisfies ImageThreadOutbound);
    },
  ).finally(() => {
    running -= 1;
    closeWhenIdle();
  });
});

port.postMessage({ id: 0, ready: true } satisfies ImageThreadOutbound);
