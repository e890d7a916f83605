import Router from '@koa/router';
import type { AppDeps } from '../deps';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { DATABASE_TIMEOUTS } from '../../db/resilience';
import { z } from 'zod';
import { answers, describeRoute } from '../openapi/describe';
import { createStorage } from '../../storage';
import { checkConfiguredPrices } from '../../services/billing/stripePrices';

/** How long one readiness check may take before it counts as failed (a load balancer polls every few seconds). */
const CHECK_TIMEOUT_MS = 3000;

export type ReadinessPart = 'database' | 'temporal' | 'storage';

export interface ReadinessCheck {
  ok: boolean;
  ms: number;
  /** What is wrong, for operators; never the underlying error text (it may hold addresses or credentials). */
  error?: string;
}

/** The configured Stripe Prices against the packages (present only when a STRIPE_PRICE_* is set). */
export interface BillingReadiness extends ReadinessCheck {
  packages: Array<{ packageId: string; priceId: string; ok: boolean; problem: string | null }>;
}

export interface ReadinessAnswer {
  status: 'ready' | 'not ready';
  failing: ReadinessPart[];
  /**
   * Parts that work only in part: 'billing' when a package's Stripe Price does not match it (that package is not
   * sold; the rest of the app is, so the instance stays in rotation).
   */
  degraded: Array<'billing'>;
  checks: Record<ReadinessPart, ReadinessCheck> & { billing?: BillingReadiness };
}

type HealthDeps = Pick<AppDeps, 'knex' | 'config' | 'logger'>;

const readinessCheck = z.object({ ok: z.boolean(), ms: z.number(), error: z.string().optional() });
const billingReadinessSchema = readinessCheck.extend({
  packages: z.array(z.object({ packageId: z.string(), priceId: z.string(), ok: z.boolean(), problem: z.string().nullable() })),
});
const readinessAnswer = answers<ReadinessAnswer>()(
  z.object({
    status: z.enum(['ready', 'not ready']),
    failing: z.array(z.enum(['database', 'temporal', 'storage'])),
    degraded: z.array(z.enum(['billing'])),
    checks: z.object({ database: readinessCheck, temporal: readinessCheck, storage: readinessCheck, billing: billingReadinessSchema.optional() }),
  }),
);
const apiHealthOk = z.object({ success: z.literal(true), status: z.literal('ok') });
const apiHealthDown = z.object({ success: z.literal(false), status: z.literal('unavailable'), error: z.string() });

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The parts each app (by its database handle) has found ready once. A part that has never been ready is starting up
 * (npm start asks while the API's start-up work still fills its event loop): its failure is news only once it was
 * ready, so it is logged as a warning from then on, and before that at info.
 */
const readyOnce = new WeakMap<object, Set<ReadinessPart>>();

async function runCheck(deps: HealthDeps, part: ReadinessPart, failure: string, probe: () => Promise<unknown>, timeoutMs = CHECK_TIMEOUT_MS): Promise<ReadinessCheck> {
  const started = Date.now();
  const seen = readyOnce.get(deps.knex) ?? new Set<ReadinessPart>();
  readyOnce.set(deps.knex, seen);
  try {
    await withTimeout(probe(), timeoutMs);
    seen.add(part);
    return { ok: true, ms: Date.now() - started };
  } catch (err) {
    if (seen.has(part)) deps.logger.warn({ err, part }, 'readiness check failed');
    else deps.logger.info({ err, part }, 'readiness check failed (not ready since start)');
    return { ok: false, ms: Date.now() - started, error: failure };
  }
}

export async function readiness(deps: HealthDeps): Promise<ReadinessAnswer> {
  const namespace = deps.config.temporalNamespace;
  const objects = createStorage(deps.config).objects;
  const billingCheck = billingReadiness(deps);
  const [database, temporal, storage] = await Promise.all([
    runCheck(deps, 'database', 'PostgreSQL does not answer', () => deps.knex.raw('select 1'), DATABASE_TIMEOUTS.connectionCheckMs),
    runCheck(deps, 'temporal', `Temporal namespace "${namespace}" is not reachable`, async () => {
      const client = await getTemporalClient(deps.config);
      await client.workflowService.describeNamespace({ namespace });
    }),
    // local disk: a small file written and removed under STORAGE_DIR; object storage: the buckets and a small object
    runCheck(deps, 'storage', 'Storage is not writable', () => objects.checkWritable()),
  ]);
  const checks = { database, temporal, storage };
  const failing = (Object.keys(checks) as ReadinessPart[]).filter((part) => !checks[part].ok);
  const billing = await billingCheck;
  return {
    status: failing.length ? 'not ready' : 'ready',
    failing,
    degraded: billing && !billing.ok ? ['billing'] : [],
    checks: billing ? { ...checks, billing } : checks,
  };
}

/** The configured Stripe Prices checked against the packages (answers kept a few minutes); undefined when none is set. */
async function billingReadiness(deps: HealthDeps): Promise<BillingReadiness | undefined> {
  if (Object.keys(deps.config.stripePriceIds).length === 0) return undefined;
  const started = Date.now();
  let checks;
  try {
    checks = await withTimeout(checkConfiguredPrices(deps.config, deps.logger), CHECK_TIMEOUT_MS);
  } catch {
    return { ok: false, ms: Date.now() - started, error: 'Stripe did not answer in time: the configured prices could not be checked', packages: [] };
  }
  const packages = checks.map(({ packageId, priceId, ok, problem }) => ({ packageId, priceId, ok, problem }));
  const problems = packages.filter((p) => !p.ok).map((p) => p.problem);
  return { ok: problems.length === 0, ms: Date.now() - started, ...(problems.length ? { error: problems.join('; ') } : {}), packages };
}

/**
 * Open without a session (load balancers, compose healthchecks, npm start's wait):
 * - `/health/live`: the process is up and serving; touches nothing else (restart the process when it fails);
 * - `/health/ready`: PostgreSQL answers, the Temporal namespace is reachable, storage is writable; 503 naming
 *   the failing parts otherwise (take the instance out of rotation, do not restart it). With STRIPE_PRICE_* set it
 *   also reports each Price against its package (`checks.billing`); a mismatch is `degraded: ['billing']`, not a
 *   503: only that package is refused, the rest of the app works;
 * - `/api/health`: the older database-only check, kept for existing callers.
 */
export function healthRouter(deps: HealthDeps): Router {
  const router = new Router();
  describeRoute(router, {
    method: 'get',
    path: '/health/live',
    tag: 'Health',
    summary: 'The process is up and serving (touches nothing else)',
    access: 'public',
    noDatabase: true,
    responses: { 200: z.object({ status: z.literal('live') }) },
  });
  router.get('/health/live', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'live' };
  });
  describeRoute(router, {
    method: 'get',
    path: '/health/ready',
    tag: 'Health',
    summary: 'PostgreSQL answers, the Temporal namespace is reachable and storage is writable (and how the configured Stripe Prices compare with the packages)',
    access: 'public',
    noDatabase: true,
    responses: { 200: readinessAnswer, 503: { description: 'Not ready: the failing parts are named', schema: readinessAnswer } },
  });
  router.get('/health/ready', async (ctx) => {
    const answer = await readiness(deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = answer.failing.length ? 503 : 200;
    ctx.body = answer;
  });
  describeRoute(router, {
    method: 'get',
    path: '/api/health',
    tag: 'Health',
    summary: 'The database answers (the older, database-only check)',
    access: 'public',
    noDatabase: true,
    responses: { 200: apiHealthOk, 503: { description: 'The database does not answer', schema: apiHealthDown } },
  });
  router.get('/api/health', async (ctx) => {
    try {
      await withTimeout(deps.knex.raw('select 1'), DATABASE_TIMEOUTS.connectionCheckMs);
      ctx.body = { success: true, status: 'ok' };
    } catch {
      ctx.status = 503;
      ctx.body = { success: false, status: 'unavailable', error: 'Database unavailable' };
    }
  });
  return router;
}
