import { Writable } from 'node:stream';
import knexFactory, { type Knex } from 'knex';
import pino from 'pino';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { DomainError, UnavailableHereError } from '../../domain/errors';
import { MSG } from '../../domain/messages';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

const GENERIC = { success: false, error: 'Something went wrong. Please try again.' };

/** A structured logger whose lines the test can read. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

let knex: Knex;
let server: TestServer;
let brokenDb: Knex;
let brokenServer: TestServer;
const captured = capturingLogger();

beforeAll(async () => {
  knex = testKnex();
  const app = createApp({ config: loadConfig(), knex, logger: captured.logger });
  // an internal failure deep in a request, with internals in its message
  app.use(async (ctx, next) => {
    if (ctx.path === '/api/test/explode') throw new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2');
    if (ctx.path === '/api/test/not-admitted') throw new DomainError(503, 'VIDEO_START_FAILED', MSG.failedToStartVideo);
    if (ctx.path === '/api/test/not-configured') throw new UnavailableHereError(503, 'PAYMENTS_UNAVAILABLE', 'Payments are not set up on this server');
    await next();
  });
  server = await serve(app);
  // a database that is not there: every query fails inside the services
  brokenDb = knexFactory({
    client: 'pg',
    connection: 'postgres://nobody:secret@127.0.0.1:1/none',
    acquireConnectionTimeout: 2000,
    pool: { min: 0, max: 1 },
    log: { warn() {}, error() {}, debug() {}, deprecate() {} },
  });
  brokenServer = await serve(createApp({ config: loadConfig(), knex: brokenDb, logger: captured.logger }));
});

afterAll(async () => {
  await server.close();
  await brokenServer.close();
  await brokenDb.destroy();
  await closeTestKnex();
});

describe('client mistakes answer 400 with a clear message', () => {
  it('malformed JSON', async () => {
    const res = await request(server.baseUrl, '/api/auth/signup', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email": "a@b.co",' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'Invalid JSON body' });
    expect(res.headers.get('x-request-id')).toMatch(/^[\w-]{8,64}$/);
  });

  it('a JSON value that is not an object', async () => {
    const res = await request(server.baseUrl, '/api/auth/signin', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '"text"' });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
  });

  it('a field of the wrong type', async () => {
    const res = await request(server.baseUrl, '/api/auth/signin', { json: { email: ['a@b.co'], password: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: 'Email must be a string', code: 'VALIDATION_ERROR' });
  });

  it('an unknown field, on a route behind a session too', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/profile', { method: 'PATCH', token: user.token, json: { name: 'Ok', isAdmin: true } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: 'Unknown field(s): isAdmin' });
    const signup = await request(server.baseUrl, '/api/auth/signup', { json: { name: 'X', email: 'x@example.test', password: 'valid-pass-1', credits: 100 } });
    expect(signup.status).toBe(400);
    expect(signup.body.error).toBe('Unknown field(s): credits');
  });

  it('an unknown /api path answers JSON 404, a wrong method JSON 405', async () => {
    const user = await createTestUser(server.baseUrl);
    const missing = await request(server.baseUrl, '/api/no-such-thing', { token: user.token });
    expect([missing.status, missing.body]).toEqual([404, { success: false, error: 'Not found' }]);
    const wrongMethod = await request(server.baseUrl, '/api/profile', { method: 'DELETE', token: user.token });
    expect([wrongMethod.status, wrongMethod.body]).toEqual([405, { success: false, error: 'Method not allowed' }]);
  });
});

describe('a refusal for a moment says when to try again', () => {
  it('a 503 of a service (a start no worker admitted in time) carries Retry-After; one of configuration does not', async () => {
    const user = await createTestUser(server.baseUrl);
    const moment = await request(server.baseUrl, '/api/test/not-admitted', { token: user.token });
    expect(moment.status).toBe(503);
    expect(moment.body).toEqual({ success: false, error: MSG.failedToStartVideo, code: 'VIDEO_START_FAILED' });
    expect(moment.headers.get('retry-after')).toBe('5');
    const configured = await request(server.baseUrl, '/api/test/not-configured', { token: user.token });
    expect(configured.status).toBe(503);
    expect(configured.headers.get('retry-after')).toBeNull();
  });
});

describe('internal failures answer a generic 500', () => {
  it('hides the message and stack, keeps the request id, and logs the error with that id', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await request(server.baseUrl, '/api/test/explode', { token: user.token, headers: { 'x-request-id': 'req-explode-0001' } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual(GENERIC);
    expect(JSON.stringify(res.body)).not.toMatch(/hunter2|ECONNREFUSED|stack|at /);
    expect(res.headers.get('x-request-id')).toBe('req-explode-0001');
    const logged = captured.lines.find((l) => l.requestId === 'req-explode-0001' && l.level === 50);
    expect(logged).toBeDefined();
    expect((logged?.err as { message?: string })?.message).toContain('ECONNREFUSED');
  });

  it('answers a generic 503 DATABASE_UNAVAILABLE with Retry-After when the database is unreachable (no details either)', async () => {
    const res = await request(brokenServer.baseUrl, '/api/auth/signup', { json: { name: 'X', email: 'down@example.test', password: 'valid-pass-1' } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ success: false, error: 'The database is not reachable right now', code: 'DATABASE_UNAVAILABLE' });
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const health = await request(brokenServer.baseUrl, '/api/health');
    expect(health.status).toBe(503);
    expect(health.body).toEqual({ success: false, status: 'unavailable', error: 'Database unavailable' });
  });
});
