import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createScratchDatabase } from '../support/scratchDatabase';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npm run admin -- <args>` the way npm does (tsx scripts/admin.ts), on the test database. */
function admin(args: string[], env: NodeJS.ProcessEnv = { DATABASE_URL: process.env.DATABASE_URL }): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(TSX, ['scripts/admin.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

let knex: Knex;
let server: TestServer;

async function roleOf(userId: string): Promise<string> {
  return (await knex('users').where({ id: userId }).first('role')).role;
}

function adminSearch(user: TestUser) {
  return request(server.baseUrl, `/api/admin/users?email=${encodeURIComponent(user.email)}`, { token: user.token });
}

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

describe('npm run admin', () => {
  it('marks one account verified by e-mail, idempotently, and refuses an unknown address', async () => {
    const user = await createTestUser(server.baseUrl, { verified: false });
    const done = await admin(['verify', user.email.toUpperCase()]);
    expect(done).toEqual({ code: 0, stdout: `${user.email} is now verified\n`, stderr: '' });
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).body.user.emailVerified).toBe(true);
    expect((await admin(['verify', user.email])).stdout).toBe(`${user.email} is already verified; nothing changed\n`);
    expect((await admin(['verify', `nobody-${user.id}@example.test`])).code).toBe(1);
  });

  it('verify-existing marks every unverified account verified (on a database of its own: it touches every account)', async () => {
    const scratch = await createScratchDatabase('verifyexisting', { migrated: true });
    try {
      await scratch.knex('users').insert([
        { email: 'old-1@example.test', password_hash: 'x' },
        { email: 'old-2@example.test', password_hash: 'x', email_verified_at: scratch.knex.fn.now() },
      ]);
      expect(await admin(['verify-existing'], { DATABASE_URL: scratch.url })).toEqual({ code: 0, stdout: 'Marked 1 account verified\n', stderr: '' });
      expect((await admin(['verify-existing'], { DATABASE_URL: scratch.url })).stdout).toBe('Every account is already verified; nothing changed\n');
      expect(await scratch.knex('users').whereNull('email_verified_at').count('* as n')).toEqual([{ n: '0' }]);
    } finally {
      await scratch.drop();
    }
  });

  it('grants the admin role by e-mail (any case), idempotently, and the admin endpoints open at once', async () => {
    const user = await createTestUser(server.baseUrl);
    expect((await adminSearch(user)).status).toBe(403);

    const granted = await admin(['grant', user.email.toUpperCase()]);
    expect(granted).toEqual({ code: 0, stdout: `${user.email} is now an admin\n`, stderr: '' });
    expect(await roleOf(user.id)).toBe('admin');
    expect((await adminSearch(user)).status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).body.user.role).toBe('admin');

    const again = await admin(['grant', user.email]);
    expect([again.code, again.stdout]).toEqual([0, `${user.email} is already an admin; nothing changed\n`]);

    const list = await admin(['list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')).toContain(user.email);
  });

  it('revokes the role, idempotently; the account stays and the admin endpoints answer 403 again', async () => {
    const user = await createTestUser(server.baseUrl);
    expect((await admin(['grant', user.email])).code).toBe(0);

    const revoked = await admin(['revoke', user.email]);
    expect(revoked).toEqual({ code: 0, stdout: `${user.email} is no longer an admin\n`, stderr: '' });
    expect(await roleOf(user.id)).toBe('user');
    expect((await adminSearch(user)).status).toBe(403);
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(200);

    const again = await admin(['revoke', user.email]);
    expect([again.code, again.stdout]).toEqual([0, `${user.email} is not an admin; nothing changed\n`]);
    expect((await admin(['list'])).stdout.split('\n')).not.toContain(user.email);
  });

  it('exits 1 with a message for an e-mail no account has, and changes nothing', async () => {
    // on a database of its own: on the run's, other files make admins meanwhile
    const scratch = await createScratchDatabase('adminunknown', { migrated: true });
    try {
      await scratch.knex('users').insert([
        { email: 'admin-1@example.test', password_hash: 'x', role: 'admin' },
        { email: 'user-1@example.test', password_hash: 'x' },
      ]);
      const before = await scratch.knex('users').orderBy('email').select('email', 'role', 'updated_at');
      for (const command of ['grant', 'revoke']) {
        const res = await admin([command, 'Nobody-Here@Example.test'], { DATABASE_URL: scratch.url });
        expect(res).toEqual({
          code: 1,
          stdout: '',
          stderr: 'No account with the e-mail nobody-here@example.test: the person signs up first, then run this again\n',
        });
      }
      expect(await scratch.knex('users').orderBy('email').select('email', 'role', 'updated_at')).toEqual(before);
    } finally {
      await scratch.drop();
    }
  });

  it('exits 2 with the usage for a missing or unknown command or a malformed e-mail, before touching a database', async () => {
    // an unreachable database proves the arguments are checked first
    const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' };
    const none = await admin([], env);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain('Usage: npm run admin -- <command>');
    expect(none.stdout).toContain('EMBEDDED_PG_PORT, default 54320');

    for (const [args, message] of [
      [['promote', 'a@b.test'], 'Unknown command "promote"'],
      [['grant'], 'grant takes one e-mail address'],
      [['grant', 'a@b.test', 'c@d.test'], 'grant takes one e-mail address'],
      [['revoke', 'not-an-email'], '"not-an-email" is not an e-mail address'],
      [['list', 'extra'], 'list takes no arguments'],
    ] as const) {
      const res = await admin([...args], env);
      expect([args, res.code, res.stderr.split('\n')[0]]).toEqual([args, 2, message]);
      expect(res.stderr).toContain('Usage: npm run admin -- <command>');
    }

    const help = await admin(['--help'], env);
    expect([help.code, help.stdout.startsWith('Usage: npm run admin')]).toEqual([0, true]);
  });

  it('exits 1 with the reason when it cannot reach the database or EMBEDDED_PG_PORT is not a port', async () => {
    const unreachable = await admin(['list'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(unreachable.code).toBe(1);
    // the database layer names the problem (db/resilience.ts: no connection -> DATABASE_UNAVAILABLE)
    expect(unreachable.stderr).toMatch(/^npm run admin failed: (The database is not reachable right now|.*ECONNREFUSED)/);

    const badPort = await admin(['list'], { EMBEDDED_PG_PORT: 'five' });
    expect([badPort.code, badPort.stderr]).toEqual([1, 'npm run admin failed: EMBEDDED_PG_PORT must be a port number, got "five"\n']);
  });
});
