/**
 * Two-factor sign-in over HTTP against the real app (issue 45 item 3): the authenticator app set up from a QR code
 * and confirmed with a code made here by otplib (the test is the authenticator), recovery codes, the second step of a
 * sign-in and its limits, "Confirm it's you" before turning factors off, and a workspace that requires two-factor
 * sign-in. Passkeys' real ceremonies run in Chromium with a virtual authenticator (tests/browser/twoFactor.test.ts).
 *
 * TOTP codes depend on the clock: every test runs on a Date that stands still unless the test moves it (a step of 30
 * seconds at a time), so no code can go stale between making and sending it.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { generate } from 'otplib';
import { createApp } from '../../api/app';
import { DEFAULT_SIGN_IN_LIMITS } from '../../api/middleware/rateLimit';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { TWO_FACTOR_MSG } from '../../domain/twoFactor';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser, type TestUser } from '../support/accounts';
import { standStillDate } from '../support/clock';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWorkspace, inWorkspace, joinWorkspace } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
let limited: TestServer;

beforeAll(async () => {
  knex = testKnex();
  const config = { ...loadConfig(), publicUrl: 'http://studio.test' };
  // counters of this file's own: every test client is 127.0.0.1
  server = await serve(createApp({ config, knex, logger, signInLimits: { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix: `tf${randomUUID().slice(0, 8)}` } }));
  limited = await serve(
    createApp({
      config,
      knex,
      logger,
      signInLimits: { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix: `tfl${randomUUID().slice(0, 8)}`, perAccountAndIp: { points: 3, durationSeconds: 3600, blockSeconds: 900 } },
    }),
  );
}, 120_000);

beforeEach(() => standStillDate());
afterEach(() => jest.useRealTimers());

afterAll(async () => {
  await server?.close();
  await limited?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

/** The next 30-second step: a new code that has not been used. */
function nextStep(): void {
  jest.setSystemTime(Date.now() + 30_000);
}

const codeFor = (secret: string) => generate({ secret });

interface WithTotp {
  user: TestUser;
  secret: string;
  recoveryCodes: string[];
}

/** A new account with an authenticator app set up (through the API, as the Security page does). */
async function userWithTotp(on: TestServer = server): Promise<WithTotp> {
  const user = await createTestUser(on.baseUrl);
  const begun = await request<{ secret: string }>(on.baseUrl, '/api/account/two-factor/totp', { token: user.token, json: {} });
  const confirmed = await request<{ recoveryCodes: string[] }>(on.baseUrl, '/api/account/two-factor/totp/confirm', { token: user.token, json: { code: await codeFor(begun.body.secret) } });
  if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
  nextStep();
  return { user, secret: begun.body.secret, recoveryCodes: confirmed.body.recoveryCodes };
}

const signIn = (on: TestServer, user: TestUser) => request<{ pendingToken: string; secondFactorRequired?: boolean; token?: string; methods?: string[] }>(on.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
const secondStep = (on: TestServer, pendingToken: string, proof: object) => request<{ token?: string; code?: string; error?: string }>(on.baseUrl, '/api/auth/second-factor', { json: { pendingToken, proof } });

describe('setting up an authenticator app', () => {
  it('makes the QR code on the server, keeps the secret encrypted, and turns on with a first right code, answering 10 recovery codes once', async () => {
    const user = await createTestUser(server.baseUrl);
    const begun = await request<{ secret: string; otpauthUrl: string; qrCode: string }>(server.baseUrl, '/api/account/two-factor/totp', { token: user.token, json: {} });
    expect(begun.status).toBe(200);
    expect(begun.body.qrCode).toMatch(/^data:image\/png;base64,/);
    expect(begun.body.otpauthUrl).toContain(`secret=${begun.body.secret}`);
    expect(begun.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/Render%20Studio:/);
    const row = (await knex('totp_factors').where({ user_id: user.id }).first()) as { secret_ciphertext: string; confirmed_at: Date | null };
    expect(row.secret_ciphertext).not.toContain(begun.body.secret);
    expect(row.confirmed_at).toBeNull();
    // not on until confirmed: the password alone still signs in
    expect((await signIn(server, user)).body.token).toEqual(expect.any(String));

    const wrong = await request(server.baseUrl, '/api/account/two-factor/totp/confirm', { token: user.token, json: { code: '000000' === (await codeFor(begun.body.secret)) ? '111111' : '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('INVALID_SECOND_FACTOR');

    const confirmed = await request<{ recoveryCodes: string[] }>(server.baseUrl, '/api/account/two-factor/totp/confirm', { token: user.token, json: { code: await codeFor(begun.body.secret) } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.recoveryCodes).toHaveLength(10);
    expect(new Set(confirmed.body.recoveryCodes).size).toBe(10);
    const stored = (await knex('recovery_codes').where({ user_id: user.id }).select('code_hash')) as Array<{ code_hash: string }>;
    expect(stored).toHaveLength(10);
    for (const code of confirmed.body.recoveryCodes) expect(stored.map((r) => r.code_hash).join()).not.toContain(code.replace(/-/g, ''));

    const status = await request<{ twoFactor: { enabled: boolean; totp: boolean; recoveryCodesLeft: number } }>(server.baseUrl, '/api/account/two-factor', { token: user.token });
    expect(status.body.twoFactor).toMatchObject({ enabled: true, totp: true, recoveryCodesLeft: 10 });
    // a second set-up is refused while one is on
    expect((await request(server.baseUrl, '/api/account/two-factor/totp', { token: user.token, json: {} })).status).toBe(409);
  });

  it('is refused to a personal access token', async () => {
    const user = await createTestUser(server.baseUrl);
    const made = await request<{ token: string }>(server.baseUrl, '/api/account/tokens', { token: user.token, json: { name: 'CI', scopes: ['read'] } });
    expect(made.status).toBe(201);
    expect((await request(server.baseUrl, '/api/account/two-factor', { token: made.body.token })).status).toBe(403);
  });
});

describe('the second step of a sign-in', () => {
  it('gives no session until a right code, and a code is good once', async () => {
    const { user, secret } = await userWithTotp();
    const sessionsBefore = await knex('sessions').where({ user_id: user.id }).count<{ count: string }[]>('* as count');
    const first = await signIn(server, user);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ secondFactorRequired: true, methods: ['totp', 'recovery'] });
    expect(first.body.token).toBeUndefined();
    expect(first.headers.get('set-cookie')).toBeNull();
    expect(await knex('sessions').where({ user_id: user.id }).count<{ count: string }[]>('* as count')).toEqual(sessionsBefore);
    // the pending token is no session
    expect((await request(server.baseUrl, '/api/auth/me', { token: first.body.pendingToken })).status).toBe(401);

    const code = await codeFor(secret);
    const wrong = await secondStep(server, first.body.pendingToken, { method: 'totp', code: code === '123456' ? '654321' : '123456' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('INVALID_SECOND_FACTOR');

    const done = await secondStep(server, first.body.pendingToken, { method: 'totp', code });
    expect(done.status).toBe(200);
    expect(done.headers.get('set-cookie')).toMatch(/rs_session=/);
    const me = await request<{ user: { id: string } }>(server.baseUrl, '/api/auth/me', { token: done.body.token! });
    expect(me.body.user.id).toBe(user.id);
    const sessions = await request<{ sessions: Array<{ current: boolean; authenticatedWith: string }> }>(server.baseUrl, '/api/account/sessions', { token: done.body.token! });
    expect(sessions.body.sessions.find((s) => s.current)?.authenticatedWith).toBe('two_factor');

    // the pending sign-in is used up, and the same code does not open a second one (replay)
    expect((await secondStep(server, first.body.pendingToken, { method: 'totp', code })).body.code).toBe('SIGN_IN_EXPIRED');
    const second = await signIn(server, user);
    expect((await secondStep(server, second.body.pendingToken, { method: 'totp', code })).status).toBe(401);
    nextStep();
    expect((await secondStep(server, second.body.pendingToken, { method: 'totp', code: await codeFor(secret) })).status).toBe(200);
  });

  it('takes each recovery code once, typed with or without dashes and in any case', async () => {
    const { user, recoveryCodes } = await userWithTotp();
    const first = await signIn(server, user);
    expect((await secondStep(server, first.body.pendingToken, { method: 'recovery', code: recoveryCodes[0].toLowerCase().replace(/-/g, ' ') })).status).toBe(200);
    const second = await signIn(server, user);
    const reused = await secondStep(server, second.body.pendingToken, { method: 'recovery', code: recoveryCodes[0] });
    expect(reused.status).toBe(401);
    expect(reused.body.error).toBe(TWO_FACTOR_MSG.invalidCode);
    expect((await secondStep(server, second.body.pendingToken, { method: 'recovery', code: recoveryCodes[1] })).status).toBe(200);
    const status = await request<{ twoFactor: { recoveryCodesLeft: number } }>(server.baseUrl, '/api/account/two-factor', { token: user.token });
    expect(status.body.twoFactor.recoveryCodesLeft).toBe(8);
  });

  it('ends a pending sign-in after 5 wrong codes or 5 minutes: the password is asked again', async () => {
    const { user, secret } = await userWithTotp();
    const first = await signIn(server, user);
    const right = await codeFor(secret);
    const wrongCode = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i += 1) expect((await secondStep(server, first.body.pendingToken, { method: 'totp', code: wrongCode })).body.code).toBe('INVALID_SECOND_FACTOR');
    const spent = await secondStep(server, first.body.pendingToken, { method: 'totp', code: right });
    expect(spent.status).toBe(401);
    expect(spent.body).toMatchObject({ code: 'SIGN_IN_EXPIRED', error: TWO_FACTOR_MSG.pendingInvalid });

    const second = await signIn(server, user);
    await knex('pending_sign_ins').where({ user_id: user.id }).whereNull('used_at').update({ expires_at: knex.raw("now() - interval '1 second'") });
    expect((await secondStep(server, second.body.pendingToken, { method: 'totp', code: right })).body.code).toBe('SIGN_IN_EXPIRED');
  });

  it('is rate-limited like the password: consecutive failures lock the account from this address, whatever the pending sign-in', async () => {
    const { user, secret } = await userWithTotp(limited);
    const right = await codeFor(secret);
    const wrongCode = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 3; i += 1) {
      const pending = await signIn(limited, user);
      expect((await secondStep(limited, pending.body.pendingToken, { method: 'totp', code: wrongCode })).status).toBe(401);
    }
    const pending = await signIn(limited, user);
    const refused = await secondStep(limited, pending.body.pendingToken, { method: 'totp', code: right });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // after the lock, the right code goes through
    jest.setSystemTime(Date.now() + 901_000);
    const later = await signIn(limited, user);
    expect((await secondStep(limited, later.body.pendingToken, { method: 'totp', code: await codeFor(secret) })).status).toBe(200);
  });
});

describe('turning two-factor sign-in off', () => {
  it('needs a second factor confirmed in the last 10 minutes, then signs in with the password alone', async () => {
    const { user, secret } = await userWithTotp();
    const refused = await request(server.baseUrl, '/api/account/two-factor/totp', { method: 'DELETE', token: user.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'SECOND_FACTOR_NEEDED', error: TWO_FACTOR_MSG.freshFactorNeeded });
    expect((await request(server.baseUrl, '/api/account/two-factor/recovery-codes', { token: user.token, json: {} })).status).toBe(403);

    const right = await codeFor(secret);
    const wrong = await request(server.baseUrl, '/api/account/two-factor/confirm', { token: user.token, json: { proof: { method: 'totp', code: right === '000000' ? '111111' : '000000' } } });
    expect(wrong.status).toBe(400);
    const confirmed = await request<{ confirmedUntil: string }>(server.baseUrl, '/api/account/two-factor/confirm', { token: user.token, json: { proof: { method: 'totp', code: right } } });
    expect(confirmed.status).toBe(200);
    expect(new Date(confirmed.body.confirmedUntil).getTime()).toBe(Date.now() + 10 * 60_000);

    // new recovery codes now, and after 10 minutes the confirmation has lapsed
    const codes = await request<{ recoveryCodes: string[] }>(server.baseUrl, '/api/account/two-factor/recovery-codes', { token: user.token, json: {} });
    expect(codes.body.recoveryCodes).toHaveLength(10);
    jest.setSystemTime(Date.now() + 10 * 60_000 + 1_000);
    expect((await request(server.baseUrl, '/api/account/two-factor/totp', { method: 'DELETE', token: user.token })).status).toBe(403);
    // a recovery code confirms too
    expect((await request(server.baseUrl, '/api/account/two-factor/confirm', { token: user.token, json: { proof: { method: 'recovery', code: codes.body.recoveryCodes[0] } } })).status).toBe(200);
    const off = await request(server.baseUrl, '/api/account/two-factor/totp', { method: 'DELETE', token: user.token });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ success: true, enabled: false });
    expect(await knex('recovery_codes').where({ user_id: user.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);
    expect((await signIn(server, user)).body.token).toEqual(expect.any(String));
  });

  it("confirms only the session that proved it: another session of the account still has to", async () => {
    const { user, secret } = await userWithTotp();
    const pending = await signIn(server, user);
    const other = await secondStep(server, pending.body.pendingToken, { method: 'totp', code: await codeFor(secret) });
    nextStep();
    expect((await request(server.baseUrl, '/api/account/two-factor/confirm', { token: user.token, json: { proof: { method: 'totp', code: await codeFor(secret) } } })).status).toBe(200);
    expect((await request(server.baseUrl, '/api/account/two-factor/totp', { method: 'DELETE', token: other.body.token! })).status).toBe(403);
  });
});

describe('a workspace that requires two-factor sign-in', () => {
  it('asks a member without it to set it up before acting there, leaves their personal workspace alone, and lets them leave', async () => {
    const owner = await userWithTotp();
    const team = await createTeamWorkspace(server.baseUrl, { owner: owner.user });
    const member = await joinWorkspace(server.baseUrl, team, 'member');
    const leaver = await joinWorkspace(server.baseUrl, team, 'viewer');

    // the owner needs it first; a personal workspace has no such setting
    const bare = await createTestUser(server.baseUrl);
    const bareTeam = await createTeamWorkspace(server.baseUrl, { owner: bare });
    const ownerWithout = await request(server.baseUrl, `/api/workspaces/${bareTeam.id}/two-factor-policy`, { method: 'PUT', token: bare.token, json: { required: true } });
    expect(ownerWithout.status).toBe(409);
    expect(ownerWithout.body.code).toBe('OWNER_NEEDS_TWO_FACTOR');
    const personal = await request(server.baseUrl, `/api/workspaces/${owner.user.id}/two-factor-policy`, { method: 'PUT', token: owner.user.token, json: { required: true } });
    expect(personal.status).toBe(400);
    // a member may not set it
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/two-factor-policy`, { method: 'PUT', token: member.token, json: { required: true } })).status).toBe(403);

    const set = await request<{ workspace: { twoFactorRequired: boolean } }>(server.baseUrl, `/api/workspaces/${team.id}/two-factor-policy`, { method: 'PUT', token: owner.user.token, json: { required: true } });
    expect(set.status).toBe(200);
    expect(set.body.workspace.twoFactorRequired).toBe(true);

    const refused = await request(server.baseUrl, '/api/projects/list', { token: member.token, headers: inWorkspace(team.id) });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'TWO_FACTOR_REQUIRED', error: TWO_FACTOR_MSG.required(team.name) });
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/members`, { token: member.token })).body.code).toBe('TWO_FACTOR_REQUIRED');
    // nothing changes for them elsewhere: their own workspace, their list of workspaces, their account
    expect((await request(server.baseUrl, '/api/projects/list', { token: member.token })).status).toBe(200);
    const listed = await request<{ workspaces: Array<{ id: string; twoFactorRequired: boolean }> }>(server.baseUrl, '/api/workspaces', { token: member.token });
    expect(listed.body.workspaces.find((w) => w.id === team.id)?.twoFactorRequired).toBe(true);
    // the owner, who has it, works as before
    expect((await request(server.baseUrl, '/api/projects/list', { token: owner.user.token, headers: inWorkspace(team.id) })).status).toBe(200);
    // leaving stays open
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/members/${leaver.id}`, { method: 'DELETE', token: leaver.token })).status).toBe(200);

    // the member sets it up and is let in
    const begun = await request<{ secret: string }>(server.baseUrl, '/api/account/two-factor/totp', { token: member.token, json: {} });
    await request(server.baseUrl, '/api/account/two-factor/totp/confirm', { token: member.token, json: { code: await codeFor(begun.body.secret) } });
    expect((await request(server.baseUrl, '/api/projects/list', { token: member.token, headers: inWorkspace(team.id) })).status).toBe(200);

    // and the owner may stop requiring it
    const cleared = await request<{ workspace: { twoFactorRequired: boolean } }>(server.baseUrl, `/api/workspaces/${team.id}/two-factor-policy`, { method: 'PUT', token: owner.user.token, json: { required: false } });
    expect(cleared.body.workspace.twoFactorRequired).toBe(false);
  });
});

describe('passkeys over HTTP', () => {
  it('hands out single-use challenges and refuses an answer that is not a passkey of the account', async () => {
    const user = await createTestUser(server.baseUrl);
    const options = await request<{ challengeId: string; options: { rp: { id: string }; challenge: string; authenticatorSelection: { residentKey: string; userVerification: string } } }>(
      server.baseUrl,
      '/api/account/two-factor/passkeys/options',
      { token: user.token, json: {} },
    );
    expect(options.status).toBe(200);
    expect(options.body.options.rp.id).toBe('studio.test');
    expect(options.body.options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    const forged = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' }, clientExtensionResults: {} };
    const refused = await request(server.baseUrl, '/api/account/two-factor/passkeys', { token: user.token, json: { challengeId: options.body.challengeId, name: 'Forged', response: forged } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('PASSKEY_REFUSED');
    expect(await knex('passkeys').where({ user_id: user.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);

    const signInOptions = await request<{ challengeId: string; options: { allowCredentials?: unknown[]; userVerification: string } }>(server.baseUrl, '/api/auth/passkey/options', { json: {} });
    expect(signInOptions.body.options.userVerification).toBe('required');
    const unknown = await request(server.baseUrl, '/api/auth/passkey', { json: { challengeId: signInOptions.body.challengeId, response: { ...forged, response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA' } } } });
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('INVALID_SECOND_FACTOR');
    // the challenge was used up by that attempt
    const again = await request(server.baseUrl, '/api/auth/passkey', { json: { challengeId: signInOptions.body.challengeId, response: { ...forged, response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA' } } } });
    expect(again.status).toBe(401);
  });
});
