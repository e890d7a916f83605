/**
 * Password reset, e-mail verification and change, and the sessions list, over HTTP against the real app with a real
 * SMTP server (aiosmtpd): the links are read from the e-mails the server received.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ACCOUNT_SECURITY_MSG } from '../../domain/accountSecurity';
import { createAccessToken } from '../../services/accounts/accessTokens';
import { settleAccountMail } from '../../services/accounts/accountSecurity';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { openEventStream } from '../support/eventStream';
import { request, serve, type TestServer } from '../support/http';
import { startSmtpServer, type ReceivedMail, type SmtpServer } from '../support/smtpServer';
import { createTeamWorkspace } from '../support/workspaces';

let knex: Knex;
let smtp: SmtpServer;
let server: TestServer;
let config: AppConfig;

beforeAll(async () => {
  knex = testKnex();
  smtp = await startSmtpServer();
  config = { ...loadConfig(), smtpUrl: smtp.url, smtpFrom: 'Render Studio <accounts@render-studio.test>', publicUrl: 'http://studio.test' };
  // counters of this file's own (the per-address budget is spent on purpose below)
  server = await serve(createApp({ config, knex, logger, actionLimits: { keyPrefix: `acctsec-${randomUUID()}` } }));
}, 120_000);

afterAll(async () => {
  await settleAccountMail();
  await server?.close();
  await smtp?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

const linkIn = (mail: ReceivedMail): URL => new URL((mail.text.match(/http:\/\/studio\.test\/\S+/) ?? [''])[0]);
const mailTo = (email: string, subject: string, verification = false) => smtp.next((m) => m.to.includes(email) && m.subject === subject, 10_000, { verification });

const askReset = (email: string, headers: Record<string, string> = {}) => request(server.baseUrl, '/api/auth/password-reset', { json: { email }, headers });

describe('password reset', () => {
  it('answers an address with and without an account alike, and e-mails a one-hour single-use link to the account', async () => {
    const user = await createTestUser(server.baseUrl);
    const known = await askReset(user.email);
    const unknown = await askReset(`nobody-${randomUUID()}@example.test`);
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(known.body).toEqual(unknown.body);
    expect(known.body).toEqual({ success: true, message: ACCOUNT_SECURITY_MSG.resetRequested });

    const mail = await mailTo(user.email, 'Reset your Render Studio password');
    expect(mail.text).toContain('Your personal access tokens stay valid');
    const link = linkIn(mail);
    expect(link.searchParams.get('auth')).toBe('reset');
    const token = link.searchParams.get('token')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // only the hash is stored, and it expires in an hour
    const row = (await knex('account_tokens').where({ user_id: user.id, purpose: 'reset' }).first()) as { token_hash: string; expires_at: Date; created_at: Date };
    expect(row.token_hash).not.toContain(token);
    expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBeCloseTo(60 * 60_000, -4);

    const confirm = await request(server.baseUrl, '/api/auth/password-reset/confirm', { json: { token, password: 'New-password-2026!' } });
    expect(confirm.status).toBe(200);
    const again = await request(server.baseUrl, '/api/auth/password-reset/confirm', { json: { token, password: 'Other-password-2026!' } });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe(ACCOUNT_SECURITY_MSG.linkInvalid);
    expect((await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: 'New-password-2026!' } })).status).toBe(200);
  });

  it('refuses an expired link', async () => {
    const user = await createTestUser(server.baseUrl);
    await askReset(user.email);
    const token = linkIn(await mailTo(user.email, 'Reset your Render Studio password')).searchParams.get('token')!;
    await knex('account_tokens').where({ user_id: user.id, purpose: 'reset' }).update({ expires_at: knex.raw("now() - interval '1 second'") });
    const res = await request(server.baseUrl, '/api/auth/password-reset/confirm', { json: { token, password: 'New-password-2026!' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('LINK_INVALID');
  });

  it('ends every session and closes its event streams, and leaves access tokens working', async () => {
    const user = await createTestUser(server.baseUrl);
    const other = await request<{ token: string }>(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const { token: pat } = await createAccessToken(knex, user.id, { name: 'CI', scopes: ['read'] });
    const stream = await openEventStream(server.baseUrl, { token: user.token });
    await stream.next((m) => m.event === 'ready');

    await askReset(user.email);
    const token = linkIn(await mailTo(user.email, 'Reset your Render Studio password')).searchParams.get('token')!;
    expect((await request(server.baseUrl, '/api/auth/password-reset/confirm', { json: { token, password: 'New-password-2026!' } })).status).toBe(200);

    await stream.next((m) => m.event === 'session-ended', 30_000);
    await stream.ended;
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(401);
    expect((await request(server.baseUrl, '/api/auth/me', { token: other.body.token })).status).toBe(401);
    expect((await request(server.baseUrl, '/api/profile', { token: pat })).status).toBe(200);
  });

  it('allows 3 requests an hour per e-mail address, whether or not it has an account', async () => {
    const email = `limit-${randomUUID()}@example.test`;
    for (let i = 0; i < 3; i += 1) expect((await askReset(email)).status).toBe(202);
    const refused = await askReset(email.toUpperCase());
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^Too many password reset requests\. Please try again in /);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('allows 20 requests an hour per client address', async () => {
    // a server of its own: the address's budget is spent here, and not for the other tests
    const own = await serve(createApp({ config, knex, logger, actionLimits: { keyPrefix: `acctsec-ip-${randomUUID()}` } }));
    try {
      for (let i = 0; i < 20; i += 1) {
        expect((await request(own.baseUrl, '/api/auth/password-reset', { json: { email: `ip-${i}-${randomUUID()}@example.test` } })).status).toBe(202);
      }
      const refused = await request(own.baseUrl, '/api/auth/password-reset', { json: { email: `ip-last-${randomUUID()}@example.test` } });
      expect(refused.status).toBe(429);
    } finally {
      await own.close();
    }
  });
});

describe('e-mail verification', () => {
  it('sends a link at sign-up; until it is opened the account cannot accept an invitation', async () => {
    const owner = await createTestUser(server.baseUrl);
    const team = await createTeamWorkspace(server.baseUrl, { owner });
    const invitee = await createTestUser(server.baseUrl, { verified: false });
    const me = await request(server.baseUrl, '/api/auth/me', { token: invitee.token });
    expect(me.body.user.emailVerified).toBe(false);

    const invited = await request<{ link: string }>(server.baseUrl, `/api/workspaces/${team.id}/invitations`, { token: owner.token, json: { email: invitee.email, role: 'member' } });
    expect(invited.status).toBe(201);
    const inviteToken = new URL(invited.body.link).searchParams.get('token')!;
    const refused = await request(server.baseUrl, `/api/invitations/${inviteToken}/accept`, { method: 'POST', token: invitee.token });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('EMAIL_NOT_VERIFIED');

    const mail = await mailTo(invitee.email, 'Verify your e-mail address for Render Studio', true);
    const verify = linkIn(mail).searchParams.get('verify')!;
    const verified = await request(server.baseUrl, '/api/auth/verify-email', { json: { token: verify } });
    expect(verified.status).toBe(200);
    expect(verified.body.message).toBe(ACCOUNT_SECURITY_MSG.emailVerified);
    expect((await request(server.baseUrl, '/api/auth/me', { token: invitee.token })).body.user.emailVerified).toBe(true);
    expect((await request(server.baseUrl, `/api/invitations/${inviteToken}/accept`, { method: 'POST', token: invitee.token })).status).toBe(200);
    // single use
    expect((await request(server.baseUrl, '/api/auth/verify-email', { json: { token: verify } })).status).toBe(400);
  });

  it('resends from the banner 3 times an hour, and only the latest link works', async () => {
    const user = await createTestUser(server.baseUrl, { verified: false });
    const first = linkIn(await mailTo(user.email, 'Verify your e-mail address for Render Studio', true)).searchParams.get('verify')!;
    for (let i = 0; i < 3; i += 1) expect((await request(server.baseUrl, '/api/account/verification', { token: user.token, json: {} })).status).toBe(202);
    expect((await request(server.baseUrl, '/api/account/verification', { token: user.token, json: {} })).status).toBe(429);
    let latest = '';
    for (let i = 0; i < 3; i += 1) latest = linkIn(await mailTo(user.email, 'Verify your e-mail address for Render Studio', true)).searchParams.get('verify')!;
    expect((await request(server.baseUrl, '/api/auth/verify-email', { json: { token: first } })).status).toBe(400);
    expect((await request(server.baseUrl, '/api/auth/verify-email', { json: { token: latest } })).status).toBe(200);
  });

  it('sends an account from before verification a link at its next sign-in', async () => {
    const user = await createTestUser(server.baseUrl);
    await knex('users').where({ id: user.id }).update({ email_verified_at: null });
    expect((await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } })).status).toBe(200);
    const mail = await mailTo(user.email, 'Verify your e-mail address for Render Studio', true);
    expect(linkIn(mail).searchParams.get('verify')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('changes the address only when the link sent to the new one is opened, and tells the old one', async () => {
    const user = await createTestUser(server.baseUrl);
    const newEmail = `new-${randomUUID()}@example.test`;
    const wrong = await request(server.baseUrl, '/api/account/email', { token: user.token, json: { email: newEmail, password: 'not-it' } });
    expect(wrong.status).toBe(400);
    const asked = await request(server.baseUrl, '/api/account/email', { token: user.token, json: { email: newEmail, password: user.password } });
    expect(asked.status).toBe(202);
    const notice = await mailTo(user.email, 'Your Render Studio e-mail address is being changed');
    expect(notice.text).toContain(newEmail);
    expect((await request(server.baseUrl, '/api/auth/me', { token: user.token })).body.user.email).toBe(user.email);
    const confirm = await mailTo(newEmail, 'Confirm your new e-mail address for Render Studio');
    const res = await request(server.baseUrl, '/api/auth/verify-email', { json: { token: linkIn(confirm).searchParams.get('verify')! } });
    expect(res.status).toBe(200);
    expect(res.body.changedEmail).toBe(true);
    const me = await request(server.baseUrl, '/api/auth/me', { token: user.token });
    expect(me.body.user).toMatchObject({ email: newEmail, emailVerified: true });
  });

  it('sends an unverified account no e-mail but its verification (credit requests)', async () => {
    const owner = await createTestUser(server.baseUrl);
    const team = await createTeamWorkspace(server.baseUrl, { owner });
    await knex('users').where({ id: owner.id }).update({ email_verified_at: null });
    const member = await createTestUser(server.baseUrl);
    await knex('workspace_members').insert({ workspace_id: team.id, user_id: member.id, role: 'member' });
    const res = await request(server.baseUrl, `/api/workspaces/${team.id}/credit-requests`, { token: member.token, json: {} });
    expect(res.status).toBeLessThan(300);
    expect(res.body.emailed).toBe(false);
  });
});

describe('sessions', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createTestUser(server.baseUrl);
  });

  it('lists the sessions with their device, address and which one is this', async () => {
    await request(server.baseUrl, '/api/auth/signin', {
      json: { email: user.email, password: user.password },
      headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1' },
    });
    const res = await request<{ sessions: Array<Record<string, unknown>> }>(server.baseUrl, '/api/account/sessions', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.sessions).toHaveLength(2);
    expect(res.body.sessions[0]).toMatchObject({ current: true, authenticatedWith: 'sign_up', ipAddress: '127.0.0.1' });
    expect(res.body.sessions[1]).toMatchObject({ current: false, authenticatedWith: 'password', device: 'Safari 17 on iOS 17.4' });
    expect(String(res.body.sessions[1].id)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('ends another session at once, closing its event stream; refuses the one in use and another account\'s', async () => {
    const signedIn = await request<{ token: string }>(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const stream = await openEventStream(server.baseUrl, { token: signedIn.body.token });
    await stream.next((m) => m.event === 'ready');
    const list = await request<{ sessions: Array<{ id: string; current: boolean }> }>(server.baseUrl, '/api/account/sessions', { token: signedIn.body.token });
    const mine = list.body.sessions.find((s) => s.current)!;
    expect((await request(server.baseUrl, `/api/account/sessions/${mine.id}`, { method: 'DELETE', token: signedIn.body.token })).status).toBe(400);
    const stranger = await createTestUser(server.baseUrl);
    expect((await request(server.baseUrl, `/api/account/sessions/${mine.id}`, { method: 'DELETE', token: stranger.token })).status).toBe(404);

    expect((await request(server.baseUrl, `/api/account/sessions/${mine.id}`, { method: 'DELETE', token: user.token })).status).toBe(200);
    await stream.next((m) => m.event === 'session-ended', 30_000);
    await stream.ended;
    expect((await request(server.baseUrl, '/api/auth/me', { token: signedIn.body.token })).status).toBe(401);
  });

  it('ends all the other sessions', async () => {
    await request(server.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const res = await request(server.baseUrl, '/api/account/sessions/end-others', { token: user.token, json: {} });
    expect(res.status).toBe(200);
    expect(res.body.ended).toBeGreaterThanOrEqual(1);
    const list = await request<{ sessions: unknown[] }>(server.baseUrl, '/api/account/sessions', { token: user.token });
    expect(list.body.sessions).toHaveLength(1);
  });
});
