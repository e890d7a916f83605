import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { AppDeps } from '../deps';
import { getTemporalClient } from '../../services/temporalClient';

/** How long one readiness check may take before it counts as failed (a load balancer polls every few seconds). */
const CHECK_TIMEOUT_MS = 3000;

export type ReadinessPart = 'database' | 'temporal' | 'storage';

export interface ReadinessCheck {
  ok: boolean;
  ms: number;
  /** What is wrong, for operators; never the underlying error text (it may hold addresses or credentials). */
  error?: string;
}

export interface ReadinessAnswer {
  status: 'ready' | 'not ready';
  failing: ReadinessPart[];
  checks: Record<ReadinessPart, ReadinessCheck>;
}

type HealthDeps = Pick<AppDeps, 'knex' | 'config' | 'logger'>;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function runCheck(deps: HealthDeps, part: ReadinessPart, failure: string, probe: () => Promise<unknown>): Promise<ReadinessCheck> {
  const started = Date.now();
  try {
    await withTimeout(probe(), CHECK_TIMEOUT_MS);
    return { ok: true, ms: Date.now() - started };
  } catch (err) {
    deps.logger.warn({ err, part }, 'readiness check failed');
    return { ok: false, ms: Date.now() - started, error: failure };
  }
}

/** A small file written and removed again under the storage root: the disk is there, mounted and writable. */
async function probeStorage(storageDir: string): Promise<void> {
  const dir = path.join(storageDir, '.health');
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `ready-${process.pid}-${randomUUID()}`);
  await fs.writeFile(file, 'ok');
  await fs.rm(file, { force: true });
}

export async function readiness(deps: HealthDeps): Promise<ReadinessAnswer> {
  const namespace = deps.config.temporalNamespace;
  const [database, temporal, storage] = await Promise.all([
    runCheck(deps, 'database', 'PostgreSQL does not answer', () => deps.knex.raw('select 1')),
    runCheck(deps, 'temporal', `Temporal namespace "${namespace}" is not reachable`, async () => {
      const client = await getTemporalClient(deps.config);
      await client.workflowService.describeNamespace({ namespace });
    }),
    runCheck(deps, 'storage', 'Storage is not writable', () => probeStorage(deps.config.storageDir)),
  ]);
  const checks = { database, temporal, storage };
  const failing = (Object.keys(checks) as ReadinessPart[]).filter((part) => !checks[part].ok);
  return { status: failing.length ? 'not ready' : 'ready', failing, checks };
}

/**
 * Open without a session (load balancers, compose healthchecks, npm start's wait):
 * - `/health/live`: the process is up and serving; touches nothing else (restart the process when it fails);
 * - `/health/ready`: PostgreSQL answers, the Temporal namespace is reachable, storage is writable; 503 naming
 *   the failing parts otherwise (take the instance out of rotation, do not restart it);
 * - `/api/health`: the older database-only check, kept for existing callers.
 */
export function healthRouter(deps: HealthDeps): Router {
  const router = new Router();
  router.get('/health/live', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'live' };
  });
  router.get('/health/ready', async (ctx) => {
    const answer = await readiness(deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = answer.failing.length ? 503 : 200;
    ctx.body = answer;
  });
  router.get('/api/health', async (ctx) => {
    try {
      await deps.knex.raw('select 1');
      ctx.body = { success: true, status: 'ok' };
    } catch {
      ctx.status = 503;
      ctx.body = { success: false, status: 'unavailable', error: 'Database unavailable' };
    }
  });
  return router;
}
