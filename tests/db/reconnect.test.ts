/**
 * Reads ride out a PostgreSQL restart of a few seconds (db/reconnect.ts; issue 41 item 8: the chaos soak met 503
 * DATABASE_UNAVAILABLE for reads during a 1-second restart): a read whose connection is ended under it runs once more
 * on a new connection and the GET answers 200; a write whose connection is ended is not run again (it may have been
 * committed); a new connection waits for a server that is not taking connections yet.
 */
import net from 'node:net';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { connectDatabase } from '../../db/connection';
import { RECONNECT } from '../../db/reconnect';
import { DatabaseUnavailableError } from '../../db/resilience';
import { createTestUser } from '../support/accounts';
import { closedPort, request, serve, type TestServer } from '../support/http';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';

const APP_NAME = `reconnect-test-${process.pid}`;

let scratch: ScratchDatabase;
let knex: Knex;
let server: TestServer;

beforeAll(async () => {
  scratch = await createScratchDatabase('reconnect', { migrated: true });
  knex = connectDatabase(scratch.url, { min: 0, max: 4 }, { applicationName: APP_NAME });
  server = await serve(createApp({ config: { ...loadConfig(), databaseUrl: scratch.url }, knex, logger }));
});

afterAll(async () => {
  await server?.close();
  await knex?.destroy();
  await scratch?.drop();
});

/** Waits until one of the app's backends waits on a lock: its statement is in flight. */
async function appStatementWaitingOnLock(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = (await scratch.knex('pg_stat_activity').where({ application_name: APP_NAME, wait_event_type: 'Lock' }).select('pid')) as unknown[];
    if (rows.length > 0) return;
    if (Date.now() > deadline) throw new Error('no statement of the app is waiting on the lock');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Ends every backend of the app's pool, as a restart of the server does (pg_terminate_backend: 57P01). */
async function terminateAppBackends(): Promise<number> {
  const { rows } = (await scratch.knex.raw('select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = ? and datname = current_database()', [APP_NAME])) as {
    rows: Array<{ done: boolean }>;
  };
  return rows.filter((r) => r.done).length;
}

/** Holds `table` locked against everything (reads too) until the returned function releases it. */
async function lockTable(table: string): Promise<() => Promise<void>> {
  const trx = await scratch.knex.transaction();
  await trx.raw(`lock table ${table} in access exclusive mode`);
  return async () => {
    await trx.rollback();
  };
}

it('answers a GET 200 when the backend running its read is terminated mid-statement', async () => {
  const user = await createTestUser(server.baseUrl, { knex: scratch.knex });
  expect((await request(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour' } })).status).toBe(201);

  const release = await lockTable('projects');
  const listing = request<{ success: boolean; projects: Array<{ name: string }> }>(server.baseUrl, '/api/projects/list', { token: user.token });
  try {
    await appStatementWaitingOnLock();
    expect(await terminateAppBackends()).toBeGreaterThan(0);
    // the retry waits on the same lock on its new connection
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    await release();
  }
  const res = await listing;
  expect(res.status).toBe(200);
  expect(res.body.projects.map((p) => p.name)).toEqual(['Harbour']);
});

it('does not run a write again when its connection is terminated mid-statement: it fails with DATABASE_UNAVAILABLE', async () => {
  await scratch.knex.raw('create table reconnect_writes (n int)');
  const release = await lockTable('reconnect_writes');
  const write = knex('reconnect_writes').insert({ n: 1 }).then(
    () => null,
    (err: unknown) => err,
  );
  try {
    await appStatementWaitingOnLock();
    expect(await terminateAppBackends()).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    await release();
  }
  const err = await write;
  expect(err).toBeInstanceOf(DatabaseUnavailableError);
  expect((err as DatabaseUnavailableError).code).toBe('DATABASE_UNAVAILABLE');
  // once only: the insert did not run a second time after the lock went
  await new Promise((r) => setTimeout(r, 300));
  expect(await scratch.knex('reconnect_writes').count({ n: '*' }).first()).toEqual({ n: '0' });
});

it('waits for a server that is not taking connections yet, then answers', async () => {
  // a server "restarting": its port refuses connections for 1 s, then passes them to the real PostgreSQL
  const url = new URL(scratch.url);
  const port = await closedPort();
  const proxied = new URL(scratch.url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(url.port || 5432), url.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  const restarting = connectDatabase(proxied.toString(), { min: 0, max: 1 }, { applicationName: `${APP_NAME}-proxied` });
  try {
    const started = Date.now();
    const read = restarting.raw('select 41 + 1 as answer');
    setTimeout(() => proxy.listen(port, '127.0.0.1'), 1_000);
    const { rows } = (await read) as { rows: Array<{ answer: number }> };
    expect(rows).toEqual([{ answer: 42 }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  } finally {
    await restarting.destroy();
    for (const s of sockets) s.destroy();
    await new Promise((r) => proxy.close(r));
  }
});

it('still answers 503 when the server does not come back within the wait', async () => {
  const gone = connectDatabase(`postgres://postgres:postgres@127.0.0.1:${await closedPort()}/none`, { min: 0, max: 1 }, { reconnectWaitMs: 600 });
  try {
    const started = Date.now();
    const err = await gone.raw('select 1').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    // it tried again until one more try would pass the wait: at least the wait less one interval, however fast or
    // slow each try was (a bound the retry rule gives, not a measurement of the machine)
    expect(Date.now() - started).toBeGreaterThanOrEqual(600 - RECONNECT.intervalMs);
  } finally {
    await gone.destroy();
  }
});
