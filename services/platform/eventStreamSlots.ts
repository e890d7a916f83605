/**
 * The per-account limit on open event streams (EVENT_STREAMS_PER_ACCOUNT), held across every API process with
 * PostgreSQL advisory locks rather than a count in memory.
 *
 * An account has `limit` slots; slot i of user u is the session-level advisory lock whose key is the first 8 bytes
 * of sha256("rs_event_stream:<u>:<i>") (64 bits: no other lock of the app, nor another user's slot, shares it in
 * practice). A stream holds one slot, taken with pg_try_advisory_lock on its process's realtime LISTEN connection
 * (services/platform/events.ts) and given back with pg_advisory_unlock when it ends. PostgreSQL releases a
 * connection's locks when it ends, so a process that dies or loses that connection frees its slots at once, and
 * the hub ends that connection's streams then anyway: a slot is held exactly as long as its stream can be open.
 *
 * Session-level advisory locks are re-entrant for the connection that holds them, so the slots this connection
 * holds (or is trying) are tracked here and never tried twice.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** The advisory lock key of an account's stream slot, as a signed 64-bit integer in decimal (what `::bigint` reads). */
export function streamSlotKey(userId: string, slot: number): string {
  return createHash('sha256').update(`rs_event_stream:${userId}:${slot}`).digest().readBigInt64BE(0).toString();
}

/** A new stream would pass the account's limit of open streams. */
export class EventStreamLimitReached extends Error {
  constructor(readonly limit: number) {
    super(`already ${limit} open event streams for this account`);
    this.name = 'EventStreamLimitReached';
  }
}

export interface StreamSlots {
  /** Takes a free slot of the user's `limit`, or answers null when every one is held (here or by another process). */
  take: (userId: string, limit: number) => Promise<number | null>;
  /** Gives the slot back (nothing to do once the connection is gone: its locks went with it). */
  give: (userId: string, slot: number) => void;
  /** Slots held on this connection (tests, metrics). */
  held: () => number;
  /** The connection is gone (and its locks with it): nothing is held, and nothing is given back any more. */
  drop: () => void;
}

/** The slots taken on `client`, one LISTEN connection's worth. */
export function createStreamSlots(client: pg.Client, onUnlockError: (err: unknown) => void): StreamSlots {
  const byUser = new Map<string, Set<number>>();
  let count = 0;
  let dropped = false;
  // one query at a time on the connection (pg queues them, but asks callers not to rely on it)
  let last: Promise<unknown> = Promise.resolve();
  const query = <T extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<T>> => {
    const next = last.then(() => client.query<T>(text, values));
    last = next.catch(() => undefined);
    return next;
  };

  const mine = (userId: string): Set<number> => {
    let set = byUser.get(userId);
    if (!set) byUser.set(userId, (set = new Set()));
    return set;
  };
  const forget = (userId: string, slot: number): boolean => {
    const set = byUser.get(userId);
    if (!set?.delete(slot)) return false;
    if (set.size === 0) byUser.delete(userId);
    count -= 1;
    return true;
  };

  return {
    async take(userId, limit) {
      if (dropped) throw new Error('the realtime LISTEN connection is gone');
      for (let slot = 0; slot < limit; slot += 1) {
        const set = mine(userId);
        if (set.has(slot)) continue;
        // claimed before the round trip, so a concurrent take in this process tries the next slot
        set.add(slot);
        count += 1;
        let locked = false;
        try {
          const { rows } = await query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [streamSlotKey(userId, slot)]);
          locked = rows[0]?.locked === true;
        } catch (err) {
          forget(userId, slot);
          throw err;
        }
        if (locked) return slot;
        forget(userId, slot);
      }
      return null;
    },
    give(userId, slot) {
      if (dropped || !forget(userId, slot)) return;
      query('select pg_advisory_unlock($1::bigint)', [streamSlotKey(userId, slot)]).catch(onUnlockError);
    },
    held: () => count,
    drop() {
      dropped = true;
      byUser.clear();
      count = 0;
    },
  };
}
