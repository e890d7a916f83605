/**
 * Each user's credit summary kept in the API process, so GET /api/credits/summary does not spend a pooled
 * database query per request (issue 16).
 *
 * Exactness: every change to a summary column (or the profile's removal) notifies `rs_credits_changed` with the
 * profile's id on commit (database triggers, db/migrations/20261125000300_credit_summary_notify.ts), whichever
 * process or code path made it; the noted cache (services/platform/notedCache.ts, which explains the barrier that closes the
 * window between a commit and its note) drops that user's entry, so a lookup never answers a summary older than a
 * change committed before it began.
 */
import { UUID_RE } from './creditLedger/ledger';
import { getCreditSummary, ProfileNotFoundError, type CreditSummary, type Db } from './credits';
import { createNotedCache, type NotedCacheSettings, type NotedCacheStats } from '../platform/notedCache';

export const CREDITS_CHANGED_CHANNEL = 'rs_credits_changed';

export type CreditSummaryCacheOptions = NotedCacheSettings;

export type CreditSummaryCacheStats = NotedCacheStats;

export interface CreditSummaryCache {
  /** The user's current summary (cached, or read and kept); ProfileNotFoundError like getCreditSummary. */
  get: (db: Db, workspaceId: string) => Promise<CreditSummary>;
  stats: () => CreditSummaryCacheStats;
  /** Resolves once the LISTEN connection is up (tests; lookups never wait for it). */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

export function createCreditSummaryCache(options: CreditSummaryCacheOptions): CreditSummaryCache {
  const cache = createNotedCache<CreditSummary>({
    ...options,
    channel: CREDITS_CHANGED_CHANNEL,
    name: 'credit summary cache',
    readsMeanwhile: 'summaries',
  });
  const { stats, ready, close } = cache;
  return {
    async get(db, workspaceId) {
      if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
      // a missing profile throws, so nothing is kept for it; a copy, so the caller cannot change the entry
      return { ...(await cache.get(workspaceId.toLowerCase(), () => getCreditSummary(db, workspaceId))) };
    },
    stats,
    ready,
    close,
  };
}
