/**
 * Single sign-on with OpenID Connect over HTTP against the real app and a real OpenID provider (npm's
 * `oidc-provider`, tests/support/oidcProvider.ts, with its own key and users): the authorization step is the
 * provider's own login and consent forms, driven with fetch and cookies. Nothing of the protocol is mocked.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { ACTION_LIMITS } from '../../domain/actionLimits';
import { SSO_CODES, SSO_MSG } from '../../domain/singleSignOn';
import { settleAccountMail } from '../../services/accounts/accountSecurity';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { authorizeAtProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const PUBLIC_URL = 'http://studio.test';
const REDIRECT_URI = `${PUBLIC_URL}/api/auth/sso/callback`;

let knex: Knex;
let provider: TestOidcProvider;
let server: TestServer;
let config: AppConfig;

beforeAll(async () => {
  knex = testKnex();
  provider = await startOidcProvider({ redirectUri: REDIRECT_URI });
  config = {
    ...loadConfig(),
    publicUrl: PUBLIC_URL,
    sso: { issuerUrl: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, name: 'Test Identity' },
  };
  // counters of this file's own (the start limit is per client address, and every start here comes from 127.0.0.1)
  server = await serve(createApp({ config, knex, logger, actionLimits: { keyPrefix: `sso-${randomUUID()}` } }));
}, 120_000);

afterAll(async () => {
  await settleAccountMail();
  await server?.close();
  await provider?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

interface Started {
  authorizationUrl: URL;
  stateCookie: string;
}

async function startSignIn(): Promise<Started> {
  const res = await fetch(`${server.baseUrl}/api/auth/sso/start`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const cookieLine = res.headers.getSetCookie().find((c) => c.startsWith('rs_sso_state='));
  expect(cookieLine).toMatch(/httponly/i);
  expect(cookieLine).toMatch(/samesite=lax/i);
  return { authorizationUrl: new URL(res.headers.get('location') ?? ''), stateCookie: (cookieLine ?? '').split(';')[0] };
}

async function callback(redirect: URL, cookie: string | undefined, accept = 'application/json') {
  const res = await fetch(`${server.baseUrl}/api/auth/sso/callback${redirect.search}`, { redirect: 'manual', headers: { accept, ...(cookie ? { cookie } : {}) } });
  const sessionCookie = res.headers.getSetCookie().find((c) => c.startsWith('rs_session=') && !c.startsWith('rs_session=;'));
  const text = await res.text();
  return { status: res.status, location: res.headers.get('location'), sessionCookie: sessionCookie?.split(';')[0], text, body: text.startsWith('{') ? (JSON.parse(text) as { error?: string; code?: string }) : null };
}

/** A person at the provider with these claims, and a whole "Sign in with ..." of theirs. */
async function signInAs(claims: { email?: string; email_verified?: boolean; name?: string }, subject = `person-${randomUUID()}`) {
  provider.addUser(subject, claims);
  const started = await startSignIn();
  const redirect = await authorizeAtProvider(started.authorizationUrl.href, REDIRECT_URI, subject);
  return { subject, started, redirect, answer: await callback(redirect, started.stateCookie) };
}

async function whoIs(sessionCookie: string | undefined) {
  const res = await request<{ user: { id: string; email: string; emailVerified: boolean } | null }>(server.baseUrl, '/api/auth/session', { headers: { cookie: sessionCookie ?? '' } });
  return res.body.user;
}

const identitiesOf = (subject: string) => knex('user_identities').where({ issuer: provider.issuer, subject });

describe('single sign-on: starting', () => {
  it('lists the configured provider for the sign-in page', async () => {
    const res = await request(server.baseUrl, '/api/auth/sso/providers');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, providers: [{ id: 'installation', name: 'Test Identity' }] });
  });

  it('redirects to the provider with PKCE S256, a state and a nonce, keeping the verifier and nonce on the server', async () => {
    const { authorizationUrl, stateCookie } = await startSignIn();
    expect(authorizationUrl.origin).toBe(provider.issuer);
    const params = authorizationUrl.searchParams;
    expect(params.get('response_type')).toBe('code');
    expect(params.get('client_id')).toBe(provider.clientId);
    expect(params.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('scope')).toBe('openid email profile');
    const state = params.get('state') ?? '';
    expect(stateCookie).toBe(`rs_sso_state=${state}`);
    const rows = (await knex('sso_sign_in_attempts').where({ nonce: params.get('nonce') })) as Array<{ state_hash: string; code_verifier: string }>;
    expect(rows).toHaveLength(1);
    // the state is stored only as its hash; the verifier never leaves the server (only its challenge does)
    expect(rows[0].state_hash).not.toContain(state);
    expect(authorizationUrl.href).not.toContain(rows[0].code_verifier);
  });

  it('limits starts per client address (each stores an attempt), then answers 429', async () => {
    const limited = await serve(
      createApp({ config, knex, logger, actionLimits: { keyPrefix: `sso-${randomUUID()}`, limits: { ...ACTION_LIMITS, ssoSignIn: { what: 'single sign-on attempts', rules: { address: { points: 2, durationSeconds: 600 } } } } } }),
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await fetch(`${limited.baseUrl}/api/auth/sso/start`, { redirect: 'manual' })).status);
      expect(statuses).toEqual([302, 302, 429]);
    } finally {
      await limited.close();
    }
  });

  it('answers 404 on an installation without single sign-on, and lists no provider', async () => {
    const plain = await serve(createApp({ config: { ...config, sso: null }, knex, logger }));
    try {
      expect((await request(plain.baseUrl, '/api/auth/sso/providers')).body).toEqual({ success: true, providers: [] });
      const start = await request(plain.baseUrl, '/api/auth/sso/start');
      expect(start.status).toBe(404);
      expect(start.body).toMatchObject({ error: SSO_MSG.notConfigured, code: SSO_CODES.notConfigured });
    } finally {
      await plain.close();
    }
  });
});

describe('single sign-on: accounts', () => {
  it('creates a verified account for a new e-mail the provider verified, and signs the same person in to it again', async () => {
    const email = `new-${randomUUID()}@example.test`;
    const first = await signInAs({ email, email_verified: true, name: 'Nadia New' });
    expect(first.answer.status).toBe(302);
    expect(first.answer.location).toBe('/');
    const user = await whoIs(first.answer.sessionCookie);
    expect(user).toMatchObject({ email, emailVerified: true });
    const session = await knex('sessions').where({ user_id: user?.id }).first();
    expect(session.authenticated_with).toBe('single_sign_on');
    expect(await identitiesOf(first.subject)).toEqual([expect.objectContaining({ user_id: user?.id, email })]);

    // the second time, the remembered identity decides (even after an e-mail change at the provider)
    provider.addUser(first.subject, { email: `changed-${randomUUID()}@example.test`, email_verified: true });
    const started = await startSignIn();
    const again = await callback(await authorizeAtProvider(started.authorizationUrl.href, REDIRECT_URI, first.subject), started.stateCookie);
    expect(again.status).toBe(302);
    expect((await whoIs(again.sessionCookie))?.id).toBe(user?.id);
    expect(await knex('users').where({ email }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('creates an unverified account when the provider has not verified the new e-mail', async () => {
    const email = `unverified-new-${randomUUID()}@example.test`;
    const { answer } = await signInAs({ email, email_verified: false });
    expect(answer.status).toBe(302);
    expect(await whoIs(answer.sessionCookie)).toMatchObject({ email, emailVerified: false });
  });

  it('links an existing account when both the provider and the account have verified the e-mail', async () => {
    const local = await createTestUser(server.baseUrl, { knex });
    const { subject, answer } = await signInAs({ email: local.email.toUpperCase(), email_verified: true });
    expect(answer.status).toBe(302);
    expect((await whoIs(answer.sessionCookie))?.id).toBe(local.id);
    expect(await identitiesOf(subject)).toEqual([expect.objectContaining({ user_id: local.id })]);
  });

  it('refuses to link when the provider has not verified the e-mail', async () => {
    const local = await createTestUser(server.baseUrl, { knex });
    const { subject, answer } = await signInAs({ email: local.email, email_verified: false });
    expect(answer.status).toBe(409);
    expect(answer.body).toEqual({ success: false, error: SSO_MSG.linkRefused, code: SSO_CODES.linkRefused });
    expect(answer.sessionCookie).toBeUndefined();
    expect(await identitiesOf(subject)).toEqual([]);
  });

  it('refuses to link when the provider says nothing about verification', async () => {
    const local = await createTestUser(server.baseUrl, { knex });
    const { answer } = await signInAs({ email: local.email });
    expect(answer.status).toBe(409);
    expect(answer.body?.code).toBe(SSO_CODES.linkRefused);
  });

  it("refuses to link when the account's own e-mail is not verified, whatever the provider says", async () => {
    const local = await createTestUser(server.baseUrl, { knex, verified: false });
    const { subject, answer } = await signInAs({ email: local.email, email_verified: true });
    expect(answer.status).toBe(409);
    expect(answer.body?.code).toBe(SSO_CODES.linkRefused);
    expect(answer.sessionCookie).toBeUndefined();
    expect(await identitiesOf(subject)).toEqual([]);
  });

  it('refuses a person the provider shares no e-mail of', async () => {
    const { answer } = await signInAs({ name: 'No Mail' });
    expect(answer.status).toBe(400);
    expect(answer.body?.code).toBe(SSO_CODES.noEmail);
  });

  it('shows a browser a page that says why, not JSON', async () => {
    const local = await createTestUser(server.baseUrl, { knex, verified: false });
    provider.addUser(`html-${local.id}`, { email: local.email, email_verified: true });
    const started = await startSignIn();
    const redirect = await authorizeAtProvider(started.authorizationUrl.href, REDIRECT_URI, `html-${local.id}`);
    const answer = await callback(redirect, started.stateCookie, 'text/html,application/xhtml+xml');
    expect(answer.status).toBe(409);
    expect(answer.text).toContain('<h1>Sign-in did not complete</h1>');
    expect(answer.text).toContain('An account with this e-mail already exists.');
  });
});

describe('single sign-on: the protocol checks', () => {
  it("refuses a callback whose state is not this browser's, or comes without the browser's cookie", async () => {
    provider.addUser('state-person', { email: `state-${randomUUID()}@example.test`, email_verified: true });
    const mine = await startSignIn();
    const other = await startSignIn();
    const redirect = await authorizeAtProvider(mine.authorizationUrl.href, REDIRECT_URI, 'state-person');
    for (const cookie of [other.stateCookie, undefined]) {
      const answer = await callback(redirect, cookie);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ success: false, error: SSO_MSG.stateInvalid, code: SSO_CODES.stateInvalid });
      expect(answer.sessionCookie).toBeUndefined();
    }
    const forged = new URL(redirect);
    forged.searchParams.set('state', 'forged-state');
    expect((await callback(forged, 'rs_sso_state=forged-state')).body?.code).toBe(SSO_CODES.stateInvalid);
    // the right browser still completes it
    expect((await callback(redirect, mine.stateCookie)).status).toBe(302);
  });

  it('refuses a replayed callback', async () => {
    const { started, redirect, answer } = await signInAs({ email: `replay-${randomUUID()}@example.test`, email_verified: true });
    expect(answer.status).toBe(302);
    const replay = await callback(redirect, started.stateCookie);
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({ success: false, error: SSO_MSG.alreadyUsed, code: SSO_CODES.alreadyUsed });
    expect(replay.sessionCookie).toBeUndefined();
  });

  it('refuses an expired sign-in', async () => {
    provider.addUser('slow-person', { email: `slow-${randomUUID()}@example.test`, email_verified: true });
    const started = await startSignIn();
    const redirect = await authorizeAtProvider(started.authorizationUrl.href, REDIRECT_URI, 'slow-person');
    await knex('sso_sign_in_attempts').where({ nonce: started.authorizationUrl.searchParams.get('nonce') }).update({ expires_at: knex.raw("now() - interval '1 second'") });
    expect((await callback(redirect, started.stateCookie)).body?.code).toBe(SSO_CODES.stateInvalid);
  });

  it('refuses an ID token whose nonce is not the one this sign-in sent', async () => {
    const email = `nonce-${randomUUID()}@example.test`;
    provider.addUser('nonce-person', { email, email_verified: true });
    const started = await startSignIn();
    // the code comes from an authorization request with another nonce (an injected code of another flow)
    const tampered = new URL(started.authorizationUrl);
    tampered.searchParams.set('nonce', 'a-nonce-this-app-never-sent');
    const redirect = await authorizeAtProvider(tampered.href, REDIRECT_URI, 'nonce-person');
    expect(redirect.searchParams.get('code')).toBeTruthy();
    const answer = await callback(redirect, started.stateCookie);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: SSO_MSG.idTokenInvalid, code: SSO_CODES.idTokenInvalid });
    expect(answer.sessionCookie).toBeUndefined();
    expect(await knex('users').where({ email })).toEqual([]);
  });

  it('answers an error from the provider with a 400 that names it', async () => {
    provider.addUser('cancel-person', { email: `cancel-${randomUUID()}@example.test`, email_verified: true });
    const started = await startSignIn();
    const redirect = await authorizeAtProvider(started.authorizationUrl.href, REDIRECT_URI, 'cancel-person', { abort: true });
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    const answer = await callback(redirect, started.stateCookie);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: `${SSO_MSG.providerRefused} (access_denied)`, code: SSO_CODES.providerRefused });
    // and the attempt is spent
    expect((await callback(redirect, started.stateCookie)).body?.code).toBe(SSO_CODES.alreadyUsed);
  });
});
