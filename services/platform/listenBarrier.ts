/**
 * The barrier of an exact in-process cache (services/platform/notedCache.ts explains the window it closes): a
 * `select 1` on the cache's LISTEN connection, sent after a lookup began. When it settles, every note of a change
 * committed before the lookup began has been handed to the cache. One barrier serves every lookup that began before it
 * was sent, so under load it costs one tiny round trip per batch of lookups.
 */
import type pg from 'pg';
import type { ListenConnection } from './listenConnection';

/** Returns `barrier(c)`, which settles once the notes committed before the call have arrived on `c`. */
export function createListenBarrier(listen: ListenConnection, name: string): (c: pg.Client) => Promise<void> {
  // the barrier query in flight, and the one sent when it is done (for lookups that began after it was sent)
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;

  const sendBarrier = (c: pg.Client): Promise<void> => {
    const p: Promise<void> = c.query('select 1').then(
      () => undefined,
      (err: unknown) => {
        listen.lost(c, err);
        throw err;
      },
    );
    running = p;
    const clear = () => {
      if (running === p) running = null;
    };
    p.then(clear, clear);
    return p;
  };

  return (c) => {
    if (!running) return sendBarrier(c);
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = null;
        if (listen.client() !== c) throw new Error(`${name} LISTEN connection lost`);
        return running ?? sendBarrier(c);
      });
    return queued;
  };
}
