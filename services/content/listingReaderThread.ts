/**
 * A content listing reader thread (services/content/listingReaders.ts): its own database pool and storage signer, and for
 * each request the bytes `listingBody`/`pageBody` make, transferred back to the API thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connectDatabase } from '../../db/connection';
import { createStorage } from '../../storage';
import { listingBody, pageBody } from './library';
import type { ReaderInbound, ReaderOutbound, ReaderThreadData } from './listingReaders';
import { transferableBytes } from '../platform/workerThreads';

const data = workerData as ReaderThreadData;
const port = parentPort;
if (!port) throw new Error('listingReaderThread runs as a worker thread');
const knex = connectDatabase(data.databaseUrl, { min: 0, max: data.poolMax }, { reconnectWaitMs: data.reconnectWaitMs });
const storage = createStorage(data.storage);

const reply = (message: ReaderOutbound, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

port.on('message', (message: ReaderInbound) => {
  if (message.kind === 'close') {
    void knex.destroy().finally(() => port.close());
    return;
  }
  const made = message.kind === 'listing' ? listingBody(knex, storage, message.projectId) : pageBody(knex, storage, message.projectId, message.limit, message.after);
  made.then(
    (body) => {
      const bytes = transferableBytes(body);
      reply({ id: message.id, body: bytes }, [bytes.buffer as ArrayBuffer]);
    },
    (err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      reply({ id: message.id, error: { message: error.message, stack: error.stack } });
    },
  );
});

reply({ id: 0, ready: true });
