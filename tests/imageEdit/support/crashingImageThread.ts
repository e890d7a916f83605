/** An image thread module (activities/imageThreadEntry.ts) that starts, then ends with code 7 when a task arrives, as a crash under a task would. */
import { parentPort } from 'node:worker_threads';

if (!parentPort) throw new Error('runs as a worker thread');
parentPort.on('message', () => process.exit(7));
parentPort.postMessage({ id: 0, ready: true });
