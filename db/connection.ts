import knexFactory, { Knex } from 'knex';
import path from 'node:path';
import { Model } from 'objection';
import { logger } from '../config/logger';
import { acquireWaitingForServer, disposeDroppedConnection, isReadOnlyBuilder, readRetryingDroppedConnection, RECONNECT } from './reconnect';
import { attachGuard, builderSql, createDatabaseGuard, DATABASE_TIMEOUTS, type DatabaseGuard, type DatabaseResilienceOptions } from './resilience';

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

/**
 * The pool's settings: each connection is opened within the connection timeout and carries PostgreSQL's
 * statement_timeout (the query timeout); a caller waits at most the connection timeout for a free connection.
 */
export function knexConfig(databaseUrl: string, pool = { min: 0, max: 10 }, options: DatabaseResilienceOptions = {}): Knex.Config {
  const queryTimeoutMs = options.queryTimeoutMs ?? DATABASE_TIMEOUTS.queryMs;
  const connectionTimeoutMs = options.connectionTimeoutMs ?? DATABASE_TIMEOUTS.connectionMs;
  return {
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      // which process a backend serves, in pg_stat_activity (operators; tests end one process's connections by it)
      application_name: options.applicationName ?? process.env.SERVICE_NAME ?? 'render-studio',
      connectionTimeoutMillis: connectionTimeoutMs,
      ...(queryTimeoutMs > 0 ? { statement_timeout: queryTimeoutMs } : {}),
    } as Knex.PgConnectionConfig,
    acquireConnectionTimeout: connectionTimeoutMs,
    pool,
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], tableName: 'knex_migrations' },
    log: KNEX_LOG,
  };
}

/** knex's own warnings (a connection that could not be had, a pool being torn down) as log lines, not console output. */
const KNEX_LOG: Knex.Config['log'] = {
  warn: (message: unknown) => logger.warn({ component: 'knex' }, String(message)),
  error: (message: unknown) => logger.error({ component: 'knex' }, String(message)),
  deprecate: (method: string, alternative: string) => logger.warn({ component: 'knex' }, `${method} is deprecated, use ${alternative}`),
  debug: (message: unknown) => logger.debug({ component: 'knex' }, String(message)),
};

type RunnerLike = { run: () => Promise<unknown> };
type PgClientClass = new (config: Knex.Config) => {
  runner(builder: unknown): RunnerLike;
  acquireConnection(): Promise<unknown>;
  _query(connection: unknown, obj: unknown): Promise<unknown>;
  transacting?: boolean;
};
// knex's PostgreSQL dialect class (the one `client: 'pg'` picks), extended below; knex accepts a client class in `client`
// eslint-disable-next-line @typescript-eslint/no-require-imports
const PgClient = require('knex/lib/dialects/postgres') as PgClientClass;

/**
 * The pg dialect with every builder's run (getting a connection and running its statements, inside a transaction
 * too: transactions' clients are made from this class's prototype) behind the guard's breakers. A new connection
 * waits a few seconds for a server that is not taking connections yet, and a read outside a transaction whose
 * connection dropped runs once more on a new one (db/reconnect.ts): reads ride out a PostgreSQL restart.
 */
function guardedPgClient(guard: DatabaseGuard, reconnectWaitMs: number): PgClientClass {
  return class GuardedPgClient extends PgClient {
    override acquireConnection(): Promise<unknown> {
      return acquireWaitingForServer(() => super.acquireConnection(), reconnectWaitMs);
    }

    // a statement that failed because its connection is gone: that connection goes back to the pool marked dead
    // (knex learns of it only when its socket reports it, which may be after the release), never to be handed out
    override _query(connection: unknown, obj: unknown): Promise<unknown> {
      return super._query(connection, obj).catch((err: unknown) => {
        disposeDroppedConnection(connection, err);
        throw err;
      });
    }

    override runner(builder: unknown): RunnerLike {
      const runner = super.runner(builder);
      const run = runner.run.bind(runner);
      const work = !this.transacting && isReadOnlyBuilder(builder) ? () => readRetryingDroppedConnection(run, () => super.runner(builder).run()) : run;
      runner.run = () => guard.run(builderSql(builder), work);
      return runner;
    }
  };
}

/**
 * Opens a knex pool with the query and connection timeouts and the database breakers (db/resilience.ts), and binds
 * objection models to it. Migrations pass `{ queryTimeoutMs: 0, breakers: false }`.
 */
export function connectDatabase(databaseUrl: string, pool?: { min: number; max: number }, options: DatabaseResilienceOptions = {}): Knex {
  const config = knexConfig(databaseUrl, pool, options);
  if (options.breakers === false) {
    const knex = knexFactory(config);
    Model.knex(knex);
    return knex;
  }
  const guard = createDatabaseGuard(options);
  const knex = knexFactory({ ...config, client: guardedPgClient(guard, options.reconnectWaitMs ?? RECONNECT.waitMs) as unknown as Knex.Config['client'] });
  attachGuard(knex, guard);
  Model.knex(knex);
  return knex;
}
