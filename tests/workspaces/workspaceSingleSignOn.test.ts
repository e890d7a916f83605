/**
 * A workspace's own single sign-on over HTTP against the real app and a real OpenID provider (npm's `oidc-provider`,
 * tests/support/oidcProvider.ts): admins set it up (the issuer's discovery document is read when saved), the sign-in
 * page finds it by an address's domain, the code flow runs through the provider's own forms, and a workspace that
 * requires it refuses passwords for its domains (its owners excepted). Nothing of the protocol is mocked.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { WORKSPACE_SSO_CODES, WORKSPACE_SSO_MSG } from '../../domain/singleSignOn';
import { settleAccountMail } from '../../services/accounts/accountSecurity';
import { startPendingSignIn } from '../../services/accounts/pendingSignIns';
import { replaceRecoveryCodes } from '../../services/accounts/recoveryCodes';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { authorizeAtProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';
import { createTeamWorkspace, joinWorkspace, type TeamWorkspace } from '../support/workspaces';

const PUBLIC_URL = 'http://studio.test';
const REDIRECT_URI = `${PUBLIC_URL}/api/auth/sso/callback`;

let knex: Knex;
let provider: TestOidcProvider;
let server: TestServer;
let config: AppConfig;

beforeAll(async () => {
  knex = testKnex();
  provider = await startOidcProvider({ redirectUri: REDIRECT_URI });
  // no installation provider: only workspaces' own
  config = { ...loadConfig(), publicUrl: PUBLIC_URL, sso: null };
  server = await serve(createApp({ config, knex, logger, actionLimits: { keyPrefix: `wsso-${randomUUID()}` } }));
}, 120_000);

afterAll(async () => {
  await settleAccountMail();
  await server?.close();
  await provider?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

const newDomain = () => `acme-${randomUUID().slice(0, 8)}.test`;

interface SsoTeam extends TeamWorkspace {
  domain: string;
}

/** A team whose owner has a verified address at a fresh domain (what claiming it needs). */
async function teamAtDomain(): Promise<SsoTeam> {
  const domain = newDomain();
  const owner = await createTestUser(server.baseUrl, { email: `owner@${domain}`, name: 'Olivia Owner' });
  return { ...(await createTeamWorkspace(server.baseUrl, { owner })), domain };
}

const settingsFor = (team: SsoTeam, overrides: Record<string, unknown> = {}) => ({
  issuerUrl: provider.issuer,
  clientId: provider.clientId,
  clientSecret: provider.clientSecret,
  displayName: 'Acme Identity',
  domains: [team.domain],
  ssoRequired: false,
  ...overrides,
});

function putSso(team: { id: string }, by: TestUser, body: unknown) {
  return request<{ sso: Record<string, unknown>; endedSessions: number; error?: string; code?: string }>(server.baseUrl, `/api/workspaces/${team.id}/sso`, { method: 'PUT', token: by.token, json: body });
}

async function ssoRows(workspaceId: string) {
  return { providers: await knex('workspace_sso_providers').where({ workspace_id: workspaceId }), domains: await knex('workspace_sso_domains').where({ workspace_id: workspaceId }) };
}

async function startFor(email: string) {
  const res = await fetch(`${server.baseUrl}/api/auth/sso/start?email=${encodeURIComponent(email)}`, { redirect: 'manual' });
  const cookieLine = res.headers.getSetCookie().find((c) => c.startsWith('rs_sso_state='));
  return { status: res.status, location: res.headers.get('location'), stateCookie: cookieLine?.split(';')[0], text: await res.text() };
}

async function callback(redirect: URL, cookie: string) {
  const res = await fetch(`${server.baseUrl}/api/auth/sso/callback${redirect.search}`, { redirect: 'manual', headers: { accept: 'application/json', cookie } });
  const sessionCookie = res.headers.getSetCookie().find((c) => c.startsWith('rs_session=') && !c.startsWith('rs_session=;'));
  const text = await res.text();
  return { status: res.status, sessionCookie: sessionCookie?.split(';')[0], body: text.startsWith('{') ? (JSON.parse(text) as { error?: string; code?: string }) : null };
}

/** A whole "Sign in with SSO" for `email`, as the person at the provider with these claims. */
async function ssoSignIn(email: string, claims: { email?: string; email_verified?: boolean; name?: string }, subject = `person-${randomUUID()}`) {
  provider.addUser(subject, claims);
  const started = await startFor(email);
  expect(started.status).toBe(302);
  const redirect = await authorizeAtProvider(started.location ?? '', REDIRECT_URI, subject);
  return callback(redirect, started.stateCookie ?? '');
}

async function whoIs(cookie: string | undefined) {
  return (await request<{ user: { id: string; email: string } | null }>(server.baseUrl, '/api/auth/session', { headers: { cookie: cookie ?? '' } })).body.user;
}

describe('workspace single sign-on: settings', () => {
  it('saves the provider after reading its discovery document, and never answers the client secret', async () => {
    const team = await teamAtDomain();
    const saved = await putSso(team, team.owner, settingsFor(team, { domains: [` ${team.domain.toUpperCase()} `] }));
    expect(saved.status).toBe(200);
    expect(saved.body.sso).toEqual({
      issuerUrl: provider.issuer,
      clientId: provider.clientId,
      clientSecretSet: true,
      displayName: 'Acme Identity',
      domains: [team.domain],
      ssoRequired: false,
      redirectUri: REDIRECT_URI,
      updatedAt: expect.any(String),
    });
    const read = await request(server.baseUrl, `/api/workspaces/${team.id}/sso`, { token: team.owner.token });
    expect(read.body.sso).toEqual(saved.body.sso);
    expect(JSON.stringify(read.body)).not.toContain(provider.clientSecret);
    // stored encrypted, not in clear
    const [row] = (await ssoRows(team.id)).providers as Array<{ client_secret_ciphertext: string }>;
    expect(row.client_secret_ciphertext).toMatch(/^v1\./);
    expect(row.client_secret_ciphertext).not.toContain(provider.clientSecret);
    // a change without a secret keeps the stored one (the discovery check uses it)
    const renamed = await putSso(team, team.owner, { ...settingsFor(team), clientSecret: undefined, displayName: 'Acme SSO' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.sso.displayName).toBe('Acme SSO');
  });

  it('refuses an issuer that is unreachable or not an OpenID provider, storing nothing', async () => {
    const team = await teamAtDomain();
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await putSso(team, team.owner, settingsFor(team, { issuerUrl: `http://127.0.0.1:${port}` }));
    expect(unreachable.status).toBe(400);
    expect(unreachable.body).toMatchObject({ code: WORKSPACE_SSO_CODES.issuerUnreachable });

    const notProvider = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"issuer":"https://elsewhere.test"}'));
    await new Promise<void>((resolve) => notProvider.listen(0, '127.0.0.1', resolve));
    try {
      const wrong = await putSso(team, team.owner, settingsFor(team, { issuerUrl: `http://127.0.0.1:${(notProvider.address() as AddressInfo).port}` }));
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ code: WORKSPACE_SSO_CODES.issuerInvalid });
    } finally {
      await new Promise<void>((resolve) => notProvider.close(() => resolve()));
    }
    const plainHttp = await putSso(team, team.owner, settingsFor(team, { issuerUrl: 'http://login.example.org' }));
    expect(plainHttp.status).toBe(400);
    expect(plainHttp.body).toMatchObject({ code: WORKSPACE_SSO_CODES.issuerInvalid, error: WORKSPACE_SSO_MSG.issuerInvalid });
    const noSecret = await putSso(team, team.owner, { ...settingsFor(team), clientSecret: undefined });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error).toBe(WORKSPACE_SSO_MSG.clientSecretRequired);
    expect(await ssoRows(team.id)).toEqual({ providers: [], domains: [] });
  });

  it('lets a domain be claimed once, never a public mail service, and only with a verified address at it', async () => {
    const first = await teamAtDomain();
    expect((await putSso(first, first.owner, settingsFor(first))).status).toBe(200);
    // another workspace whose owner also has an address there
    const rivalOwner = await createTestUser(server.baseUrl, { email: `rival-${randomUUID().slice(0, 6)}@${first.domain}` });
    const rival = { ...(await createTeamWorkspace(server.baseUrl, { owner: rivalOwner })), domain: first.domain };
    const taken = await putSso(rival, rivalOwner, settingsFor(rival));
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: WORKSPACE_SSO_CODES.domainTaken, error: WORKSPACE_SSO_MSG.domainTaken(first.domain) });

    const team = await teamAtDomain();
    const gmail = await putSso(team, team.owner, settingsFor(team, { domains: ['gmail.com'] }));
    expect(gmail.status).toBe(400);
    expect(gmail.body.error).toBe(WORKSPACE_SSO_MSG.publicDomain('gmail.com'));
    const malformed = await putSso(team, team.owner, settingsFor(team, { domains: ['not a domain'] }));
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe(WORKSPACE_SSO_CODES.domainInvalid);
    const notTheirs = await putSso(team, team.owner, settingsFor(team, { domains: [newDomain()] }));
    expect(notTheirs.status).toBe(403);
    expect(notTheirs.body.code).toBe(WORKSPACE_SSO_CODES.domainNotYours);
    const unverifiedOwner = await createTestUser(server.baseUrl, { email: `new@${newDomain()}`, verified: false });
    const unverifiedTeam = { ...(await createTeamWorkspace(server.baseUrl, { owner: unverifiedOwner })), domain: unverifiedOwner.email.split('@')[1] };
    expect((await putSso(unverifiedTeam, unverifiedOwner, settingsFor(unverifiedTeam))).body.code).toBe(WORKSPACE_SSO_CODES.domainNotYours);
    expect(await ssoRows(team.id)).toEqual({ providers: [], domains: [] });
  });

  it('is for admins and owners with a session: members get 403, outsiders 404, access tokens 403, a personal workspace 400', async () => {
    const team = await teamAtDomain();
    const admin = await joinWorkspace(server.baseUrl, team, 'admin', await createTestUser(server.baseUrl, { email: `admin@${team.domain}` }));
    const member = await joinWorkspace(server.baseUrl, team, 'member');
    const outsider = await createTestUser(server.baseUrl);
    expect((await putSso(team, member, settingsFor(team))).status).toBe(403);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/sso`, { token: member.token })).status).toBe(403);
    expect((await putSso(team, outsider, settingsFor(team))).status).toBe(404);
    const pat = await request<{ token: string }>(server.baseUrl, '/api/account/tokens', { token: team.owner.token, json: { name: 'ci', scopes: ['read', 'generate'] } });
    expect(pat.status).toBe(201);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/sso`, { token: pat.body.token })).status).toBe(403);
    expect((await putSso(team, admin, settingsFor(team))).status).toBe(200);
    const personal = await putSso({ id: team.owner.id }, team.owner, settingsFor(team, { domains: [team.domain] }));
    expect(personal.status).toBe(400);
    expect((await request(server.baseUrl, `/api/workspaces/${team.id}/sso`, { method: 'DELETE', token: admin.token })).status).toBe(200);
    expect(await ssoRows(team.id)).toEqual({ providers: [], domains: [] });
  });
});

describe('workspace single sign-on: signing in', () => {
  it('finds the provider by the address domain and signs a new person in with the code flow', async () => {
    const team = await teamAtDomain();
    await putSso(team, team.owner, settingsFor(team));
    const lookup = await request(server.baseUrl, '/api/auth/sso/lookup', { json: { email: `Someone@${team.domain.toUpperCase()}` } });
    expect(lookup.body).toEqual({ success: true, provider: { id: team.id, name: 'Acme Identity' }, ssoRequired: false });
    expect((await request(server.baseUrl, '/api/auth/sso/lookup', { json: { email: `someone@${newDomain()}` } })).body).toEqual({ success: true, provider: null, ssoRequired: false });

    const email = `nadia@${team.domain}`;
    const started = await startFor(email);
    const authorizationUrl = new URL(started.location ?? '');
    expect(authorizationUrl.origin).toBe(provider.issuer);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('login_hint')).toBe(email);
    const [attempt] = (await knex('sso_sign_in_attempts').where({ nonce: authorizationUrl.searchParams.get('nonce') })) as Array<{ workspace_id: string }>;
    expect(attempt.workspace_id).toBe(team.id);
    const subject = `nadia-${randomUUID()}`;
    provider.addUser(subject, { email, email_verified: true, name: 'Nadia' });
    const answer = await callback(await authorizeAtProvider(authorizationUrl.href, REDIRECT_URI, subject), started.stateCookie ?? '');
    expect(answer.status).toBe(302);
    expect((await whoIs(answer.sessionCookie))?.email).toBe(email);
  });

  it('answers a clear 404 for an address whose domain has no provider', async () => {
    const started = await startFor(`x@${newDomain()}`);
    expect(started.status).toBe(404);
    expect(JSON.parse(started.text)).toMatchObject({ code: WORKSPACE_SSO_CODES.noProviderForEmail });
  });

  it("refuses an address outside the workspace's domains, and links an existing account only through verified e-mail on both sides", async () => {
    const team = await teamAtDomain();
    await putSso(team, team.owner, settingsFor(team));
    const outside = await ssoSignIn(`a@${team.domain}`, { email: `victim@${newDomain()}`, email_verified: true });
    expect(outside.status).toBe(403);
    expect(outside.body?.code).toBe(WORKSPACE_SSO_CODES.emailOutsideDomains);

    const unverified = await createTestUser(server.baseUrl, { email: `una@${team.domain}`, verified: false });
    const refused = await ssoSignIn(unverified.email, { email: unverified.email, email_verified: true });
    expect(refused.status).toBe(409);
    const existing = await createTestUser(server.baseUrl, { email: `eve@${team.domain}` });
    const notVerifiedThere = await ssoSignIn(existing.email, { email: existing.email, email_verified: false });
    expect(notVerifiedThere.status).toBe(409);
    const linked = await ssoSignIn(existing.email, { email: existing.email, email_verified: true });
    expect(linked.status).toBe(302);
    expect((await whoIs(linked.sessionCookie))?.id).toBe(existing.id);
  });
});

describe('workspace single sign-on: required for its domains', () => {
  it('refuses passwords for the domains, ends password sessions, keeps SSO sessions, and exempts owners', async () => {
    const team = await teamAtDomain();
    const person = await joinWorkspace(server.baseUrl, team, 'member', await createTestUser(server.baseUrl, { email: `pat@${team.domain}` }));
    // Pat also has a session from single sign-on
    await putSso(team, team.owner, settingsFor(team));
    const viaSso = await ssoSignIn(person.email, { email: person.email, email_verified: true });
    expect(viaSso.status).toBe(302);
    const elsewhere = await createTestUser(server.baseUrl);

    const required = await putSso(team, team.owner, settingsFor(team, { ssoRequired: true }));
    expect(required.status).toBe(200);
    expect(required.body.endedSessions).toBe(1);
    expect(await whoIs(person.cookie)).toBeNull();
    expect((await whoIs(viaSso.sessionCookie))?.id).toBe(person.id);
    expect((await whoIs(team.owner.cookie))?.id).toBe(team.owner.id);
    expect((await whoIs(elsewhere.cookie))?.id).toBe(elsewhere.id);

    const message = WORKSPACE_SSO_MSG.ssoRequired(team.name, 'Acme Identity');
    const password = await request(server.baseUrl, '/api/auth/signin', { json: { email: person.email, password: person.password } });
    expect(password.status).toBe(403);
    expect(password.body).toMatchObject({ code: WORKSPACE_SSO_CODES.ssoRequired, error: message });
    // a wrong password still says only that
    expect((await request(server.baseUrl, '/api/auth/signin', { json: { email: person.email, password: 'wrong-password-1' } })).status).toBe(401);
    expect((await request(server.baseUrl, '/api/auth/sso/lookup', { json: { email: person.email } })).body).toMatchObject({ ssoRequired: true });

    const reset = await request(server.baseUrl, '/api/auth/password-reset', { json: { email: person.email } });
    expect(reset.status).toBe(403);
    expect(reset.body.error).toBe(WORKSPACE_SSO_MSG.ssoRequiredReset(team.name, 'Acme Identity'));
    expect(await knex('account_tokens').where({ user_id: person.id, purpose: 'reset' })).toHaveLength(0);
    // the same answer for an address of the domain without an account
    expect((await request(server.baseUrl, '/api/auth/password-reset', { json: { email: `nobody@${team.domain}` } })).body.error).toBe(reset.body.error);
    // the owner keeps a password and its reset link
    const ownerSignIn = await request(server.baseUrl, '/api/auth/signin', { json: { email: team.owner.email, password: team.owner.password } });
    expect(ownerSignIn.status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/password-reset', { json: { email: team.owner.email } })).status).toBe(403);
    expect(await knex('account_tokens').where({ user_id: team.owner.id, purpose: 'reset' })).toHaveLength(1);

    // turned off: passwords work again
    expect((await putSso(team, team.owner, settingsFor(team, { ssoRequired: false }))).status).toBe(200);
    expect((await request(server.baseUrl, '/api/auth/signin', { json: { email: person.email, password: person.password } })).status).toBe(200);
  });

  it('lets an admin at the domains require it only from a session opened through single sign-on', async () => {
    const team = await teamAtDomain();
    const admin = await joinWorkspace(server.baseUrl, team, 'admin', await createTestUser(server.baseUrl, { email: `ada@${team.domain}` }));
    expect((await putSso(team, admin, settingsFor(team))).status).toBe(200);
    const fromPassword = await putSso(team, admin, settingsFor(team, { ssoRequired: true }));
    expect(fromPassword.status).toBe(409);
    expect(fromPassword.body).toMatchObject({ code: WORKSPACE_SSO_CODES.adminNeedsSso, error: WORKSPACE_SSO_MSG.adminNeedsSso('Acme Identity') });
    expect((await ssoRows(team.id)).providers).toMatchObject([{ sso_required: false }]);

    const viaSso = await ssoSignIn(admin.email, { email: admin.email, email_verified: true });
    expect(viaSso.status).toBe(302);
    const ssoSession = { ...admin, token: (viaSso.sessionCookie ?? '').replace(/^rs_session=/, '') };
    const required = await putSso(team, ssoSession, settingsFor(team, { ssoRequired: true }));
    expect(required.status).toBe(200);
    // the admin's password session ended, the one from single sign-on goes on
    expect(required.body.endedSessions).toBe(1);
    expect(await whoIs(admin.cookie)).toBeNull();
    expect((await whoIs(viaSso.sessionCookie))?.id).toBe(admin.id);
  });

  it('refuses the second step of a password sign-in started before the requirement', async () => {
    const team = await teamAtDomain();
    const person = await joinWorkspace(server.baseUrl, team, 'member', await createTestUser(server.baseUrl, { email: `tom@${team.domain}` }));
    await putSso(team, team.owner, settingsFor(team));
    // a pending sign-in as the password step leaves it (two-factor accounts), then the requirement
    const [code] = await replaceRecoveryCodes(knex, person.id);
    const pending = await startPendingSignIn(knex, person.id, {});
    await putSso(team, team.owner, settingsFor(team, { ssoRequired: true }));
    const second = await request(server.baseUrl, '/api/auth/second-factor', { json: { pendingToken: pending.token, proof: { method: 'recovery', code } } });
    expect(second.body).toMatchObject({ code: WORKSPACE_SSO_CODES.ssoRequired });
    expect(second.status).toBe(403);
  });
});
