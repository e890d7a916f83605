/**
 * A PostgreSQL that refuses connections (restarting: the soak's chaos mode, issue 28 item 3) is a 503
 * DATABASE_UNAVAILABLE with Retry-After even where no breaker translates the driver's error (a transaction's BEGIN
 * needs a connection before any statement runs through the breakers), never a 500.
 */
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { connectDatabase } from '../../db/connection';
import { closedPort, request, serve, type TestServer } from '../support/http';

describe('PostgreSQL unreachable', () => {
  let server: TestServer;
  let knex: ReturnType<typeof connectDatabase>;

  beforeAll(async () => {
    const config = { ...loadConfig(), databaseUrl: `postgres://postgres:postgres@127.0.0.1:${await closedPort()}/none` };
    knex = connectDatabase(config.databaseUrl);
    server = await serve(createApp({ config, knex, logger }));
  });

  afterAll(async () => {
    await server.close();
    await knex.destroy();
  });

  it('answers a sign-up (one transaction) with 503 DATABASE_UNAVAILABLE and Retry-After', async () => {
    const res = await request(server.baseUrl, '/api/auth/signup', { json: { name: 'Ada', email: 'ada@example.test', password: 'pw-unreachable-9' } });
    expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({ status: 503, code: 'DATABASE_UNAVAILABLE' });
    expect(res.headers.get('retry-after')).toBe('5');
  });
});
