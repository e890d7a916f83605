import type { Knex } from 'knex';
import { loadConfig, type AppConfig } from '../config/env';
import { logger as rootLogger, type Logger } from '../config/logger';
import { connectDatabase } from '../db/connection';
import type { ChatProvider } from '../providers/types';
import { createEventHub, type EventHub } from '../services/platform/events';
import { createCreditSummaryCache, type CreditSummaryCache } from '../services/billing/creditSummaryCache';
import { createContentChanges, type ContentChanges } from '../services/content/contentChanges';
import { createListingReaders, type ListingReaders } from '../services/content/listingReaders';
import { createProjectOwnerCache, type ProjectOwnerCache } from '../services/content/projectOwnerCache';
import { createMembershipCache, type MembershipCache } from '../services/workspaces/membershipCache';
import { createSessionCache, type SessionCache } from '../services/accounts/sessionCache';
import { closeTemporalClient } from '../services/platform/temporalClient';
import { PeriodicSweep } from '../services/platform/periodicSweep';
import { EXPIRED_ATTEMPT_COUNTERS_SWEEP_EVERY_MS, removeExpiredAttemptCounters } from '../services/accounts/attemptCounters';
import { storageConfigOf } from '../storage';
import type { TaskQueueName } from '../domain/taskQueues';
import type { EnhanceAccessLimits } from '../services/generation/enhanceAccess';
import type { SignInLimits } from './middleware/rateLimit';
import type { ActionLimiterOptions } from '../services/platform/actionLimiter';
import type { HostResolver } from '../services/integrations/webhookTargets';
import type { GuestLimits } from '../services/review/guestSessions';

/** What the API's routers may use. Each router takes only the parts it needs. */
export interface AppDeps {
  config: AppConfig;
  knex: Knex;
  logger: Logger;
  /** Sign-in attempt budgets; defaults to DEFAULT_SIGN_IN_LIMITS (tests pass small ones). */
  signInLimits?: SignInLimits;
  /** Enhance Renders access-code guess budgets; DEFAULT_ENHANCE_ACCESS_LIMITS unless a test passes small ones. */
  enhanceAccessLimits?: EnhanceAccessLimits;
  /** Budgets of invitations, test events and new workspaces (domain/actionLimits.ts); tests pass small ones or a key prefix of their own. */
  actionLimits?: ActionLimiterOptions;
  /** Review links' guest limits (services/review/guestSessions.ts DEFAULT_GUEST_LIMITS unless a test passes small ones). */
  guestReviewLimits?: GuestLimits;
  /** Task queues the API starts workflows on (and routes their media work and approvals to); TASK_QUEUES unless a test runs its own worker. */
  taskQueues?: Partial<Record<TaskQueueName, string>>;
  /** The process's realtime hub (one LISTEN connection); createApp makes one when absent. */
  events?: EventHub;
  /** Resolved sessions kept in this process (services/accounts/sessionCache.ts); without it every request reads its session. */
  sessions?: SessionCache;
  /** Each user's credit summary kept in this process (services/billing/creditSummaryCache.ts); without it every summary is read. */
  creditSummaries?: CreditSummaryCache;
  /** Each project's owner kept in this process (services/content/projectOwnerCache.ts); without it every ownership check is read. */
  projectOwners?: ProjectOwnerCache;
  /** Each workspace member's role kept in this process (services/workspaces/membershipCache.ts); without it every access check reads it. */
  memberships?: MembershipCache;
  /** Threads that read and build content listings (services/content/listingReaders.ts); without them the API thread does. */
  listingReaders?: ListingReaders;
  /**
   * Content changes heard from PostgreSQL (services/content/contentChanges.ts): they keep the library's reused listings
   * exact across API processes; without them only this process's own writes clear a reused listing.
   */
  contentChanges?: ContentChanges;
  /** The assembly chat's assistant; createChatProvider(config) (CHAT_PROVIDER) when absent. */
  chat?: ChatProvider;
  /** How webhook endpoint host names are resolved for the target check (dns.lookup unless a test runs its own DNS server). */
  webhookResolver?: HostResolver;
  /** Heartbeat interval of /api/events streams; 15 s unless a test wants it quicker. */
  eventStreamHeartbeatMs?: number;
  /**
   * The API process's own background work (the hourly sweep of abandoned resumable uploads): on for the entry point
   * (buildAppDeps), whose close stops it; off for apps built in tests, which end without a close of their own.
   */
  background?: BackgroundWork;
}

/** Background work the app's routers start, stopped (and waited for) when the process closes. */
export class BackgroundWork {
  private readonly stops: Array<() => Promise<void>> = [];

  onClose(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.stops.splice(0).map((stop) => stop()));
  }
}

export interface AppRuntime {
  deps: AppDeps;
  /** Releases what buildAppDeps opened (database pool, Temporal connection). */
  close: () => Promise<void>;
}

/** The real dependencies for an entry point (api/server.ts, benchmarks): connections open lazily. */
export function buildAppDeps(config: AppConfig = loadConfig(), logger: Logger = rootLogger): AppRuntime {
  const knex = connectDatabase(config.databaseUrl);
  const events = createEventHub({ databaseUrl: config.databaseUrl, knex, logger });
  const sessions = createSessionCache({ databaseUrl: config.databaseUrl, logger });
  const creditSummaries = createCreditSummaryCache({ databaseUrl: config.databaseUrl, logger });
  const projectOwners = createProjectOwnerCache({ databaseUrl: config.databaseUrl, logger });
  const memberships = createMembershipCache({ databaseUrl: config.databaseUrl, logger });
  const contentChanges = createContentChanges({ databaseUrl: config.databaseUrl, logger });
  const listingReaders = config.listingReaderThreads
    ? createListingReaders({
        threads: config.listingReaderThreads,
        databaseUrl: config.databaseUrl,
        storage: storageConfigOf(config),
        poolMax: 5,
        logger,
      })
    : undefined;
  const background = new BackgroundWork();
  const expiredAttemptCounters = new PeriodicSweep({
    everyMs: EXPIRED_ATTEMPT_COUNTERS_SWEEP_EVERY_MS,
    run: () => removeExpiredAttemptCounters(knex),
    what: 'expired sign-in and access-code attempt counters',
    logger,
    // the database is opened on first use, not when the process starts
    runAtStart: false,
  });
  expiredAttemptCounters.start();
  background.onClose(() => expiredAttemptCounters.stop());
  return {
    deps: { config, knex, logger, events, sessions, creditSummaries, projectOwners, memberships, contentChanges, listingReaders, background },
    close: async () => {
      await background.close();
      await Promise.all([events.close(), sessions.close(), creditSummaries.close(), projectOwners.close(), memberships.close(), contentChanges.close(), listingReaders?.close()]);
      await Promise.allSettled([knex.destroy(), closeTemporalClient()]);
    },
  };
}
