/**
 * Single sign-on with OpenID Connect: the authorization code flow with PKCE (S256), state and nonce, through
 * `openid-client`. The PKCE verifier and nonce stay on the server (sso_sign_in_attempts, under the state's hash);
 * the state itself is in the browser's short-lived cookie and in the provider's redirect, and both must agree.
 *
 * Accounts: a provider's person (issuer + subject) is remembered in user_identities at the first sign-in. That first
 * sign-in joins an existing account only when the provider says `email_verified: true` and the account's own
 * address is verified too (no account takeover through an unverified address on either side); a new address gets a
 * new account, verified when the provider says so.
 *
 * Providers: the installation's (SSO_* variables) and each workspace's own (services/workspaces/
 * workspaceSingleSignOn.ts), found by the e-mail address's domain. The attempt remembers which workspace's provider
 * it was started with, so the callback finishes it with the same one; a workspace's provider signs in only
 * addresses of the domains that workspace claimed.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import * as oidc from 'openid-client';
import { UniqueViolationError } from 'objection';
import type { SsoProviderConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import { User } from '../../db/models/User';
import { DomainError, UnavailableHereError } from '../../domain/errors';
import { SSO_ATTEMPT_TTL_MS, SSO_CODES, SSO_MSG, WORKSPACE_SSO_CODES, WORKSPACE_SSO_MSG, emailDomainOf, type SsoProviderSummary } from '../../domain/singleSignOn';
import { resolveWebhookTarget, webhookTargetPolicy } from '../integrations/webhookTargets';
import { providerForEmail, providerOfWorkspace, type WorkspaceProvider, type WorkspaceSsoConfig } from '../workspaces/workspaceSingleSignOn';
import { insertAccount, normalizeEmail, startSignedInSession, type SignedIn } from './accounts';
import { hashPassword } from './passwords';
import type { SessionDevice } from './sessions';

export interface SingleSignOnDeps {
  knex: Knex;
  config: WorkspaceSsoConfig & { sso: SsoProviderConfig | null; sessionTtlDays: number };
  logger: Pick<Logger, 'warn' | 'info'>;
}

/** The installation's provider (the environment's SSO_* variables); a workspace's provider is named by the workspace's id. */
export const INSTALLATION_PROVIDER_ID = 'installation';

const SCOPE = 'openid email profile';

function refusal(key: keyof typeof SSO_MSG, status = 400, message: string = SSO_MSG[key]): DomainError {
  return new DomainError(status, SSO_CODES[key], message);
}

export function ssoProviders(config: SingleSignOnDeps['config']): SsoProviderSummary[] {
  return config.sso ? [{ id: INSTALLATION_PROVIDER_ID, name: config.sso.name }] : [];
}

/** Registered at the provider as the client's redirect URI. */
export function ssoRedirectUri(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/api/auth/sso/callback`;
}

function configuredProvider(config: SingleSignOnDeps['config']): SsoProviderConfig {
  if (!config.sso) throw new UnavailableHereError(404, SSO_CODES.notConfigured, SSO_MSG.notConfigured);
  return config.sso;
}

// the provider's discovery document, read once per issuer and client (a failed read is tried again next time)
const discovered = new Map<string, Promise<oidc.Configuration>>();

async function clientConfiguration(provider: SsoProviderConfig, logger: SingleSignOnDeps['logger']): Promise<oidc.Configuration> {
  const key = `${provider.issuerUrl}\n${provider.clientId}\n${provider.clientSecret}`;
  let pending = discovered.get(key);
  if (!pending) {
    const issuer = new URL(provider.issuerUrl);
    // plain http is accepted by config/env.ts only for an issuer on this machine (development and tests)
    const options: oidc.DiscoveryRequestOptions = issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {};
    pending = oidc.discovery(issuer, provider.clientId, undefined, oidc.ClientSecretBasic(provider.clientSecret), options);
    discovered.set(key, pending);
    pending.catch(() => discovered.delete(key));
  }
  try {
    return await pending;
  } catch (err) {
    logger.warn({ err, issuer: provider.issuerUrl }, 'could not read the identity provider’s discovery document');
    throw refusal('providerUnreachable', 503);
  }
}

export function stateHash(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** The provider a sign-in starts with: the e-mail domain's workspace provider when an address is given, else the installation's. */
async function providerToStart(deps: SingleSignOnDeps, email: string | undefined): Promise<{ provider: SsoProviderConfig; workspaceId: string | null }> {
  if (email === undefined) return { provider: configuredProvider(deps.config), workspaceId: null };
  const found = await providerForEmail(deps.knex, deps.config, normalizeEmail(email));
  if (!found) throw new UnavailableHereError(404, WORKSPACE_SSO_CODES.noProviderForEmail, WORKSPACE_SSO_MSG.noProviderForEmail);
  await checkWorkspaceIssuer(deps, found);
  return { provider: found.config, workspaceId: found.workspaceId };
}

/** A workspace's issuer is an address its admins typed: it must still be public when the server fetches it. */
async function checkWorkspaceIssuer(deps: SingleSignOnDeps, found: WorkspaceProvider): Promise<void> {
  try {
    await resolveWebhookTarget(found.config.issuerUrl, webhookTargetPolicy(deps.config));
  } catch (err) {
    deps.logger.warn({ err, workspaceId: found.workspaceId }, 'a workspace identity provider’s issuer is no longer a public address');
    throw refusal('providerUnreachable', 503);
  }
}

/**
 * Begins a "Sign in with ...": the provider's authorization URL, and the state the browser keeps in its cookie.
 * `email`: the address typed on the sign-in page, whose domain names the workspace's provider.
 */
export async function startSsoSignIn(deps: SingleSignOnDeps, input: { email?: string } = {}): Promise<{ authorizationUrl: string; state: string }> {
  const { provider, workspaceId } = await providerToStart(deps, input.email);
  const client = await clientConfiguration(provider, deps.logger);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  // a sign-in nobody finished is gone after its lifetime; clear those as new ones start
  await deps.knex('sso_sign_in_attempts').where('expires_at', '<', deps.knex.raw("now() - interval '1 day'")).delete();
  await deps.knex('sso_sign_in_attempts').insert({
    state_hash: stateHash(state),
    issuer: provider.issuerUrl,
    workspace_id: workspaceId,
    code_verifier: codeVerifier,
    nonce,
    expires_at: new Date(Date.now() + SSO_ATTEMPT_TTL_MS),
  });
  const authorizationUrl = oidc.buildAuthorizationUrl(client, {
    redirect_uri: ssoRedirectUri(deps.config.publicUrl),
    scope: SCOPE,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...(input.email !== undefined ? { login_hint: normalizeEmail(input.email) } : {}),
  });
  return { authorizationUrl: authorizationUrl.href, state };
}

function sameState(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

interface Attempt {
  issuer: string;
  workspace_id: string | null;
  code_verifier: string;
  nonce: string;
}

/** Marks the attempt used (once: a replayed callback finds it used) and answers its verifier and nonce. */
async function takeAttempt(knex: Knex, state: string): Promise<Attempt> {
  const hash = stateHash(state);
  const [taken] = (await knex('sso_sign_in_attempts')
    .where({ state_hash: hash })
    .whereNull('used_at')
    .andWhere('expires_at', '>', knex.fn.now())
    .update({ used_at: knex.fn.now() })
    .returning(['issuer', 'workspace_id', 'code_verifier', 'nonce'])) as Attempt[];
  if (taken) return taken;
  const used = await knex('sso_sign_in_attempts').where({ state_hash: hash }).whereNotNull('used_at').first();
  throw used ? refusal('alreadyUsed') : refusal('stateInvalid');
}

export interface SsoClaims {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string;
}

async function exchangeCode(client: oidc.Configuration, callbackUrl: URL, attempt: Attempt, state: string, logger: SingleSignOnDeps['logger']): Promise<SsoClaims> {
  let claims: oidc.IDToken | undefined;
  try {
    const tokens = await oidc.authorizationCodeGrant(client, callbackUrl, {
      pkceCodeVerifier: attempt.code_verifier,
      expectedState: state,
      expectedNonce: attempt.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
  } catch (err) {
    if (err instanceof oidc.AuthorizationResponseError) throw refusal('providerRefused', 400, providerRefusal(err.error));
    if (err instanceof oidc.ResponseBodyError) throw refusal('codeRejected');
    // the answer failed a check: the ID token's signature, issuer, audience, expiry or nonce (openid-client's ClientError)
    if (err instanceof oidc.ClientError) throw refusal('idTokenInvalid');
    // the token endpoint could not be reached
    logger.warn({ err }, 'the identity provider’s token endpoint failed');
    throw refusal('providerUnreachable', 503);
  }
  if (!claims) throw refusal('idTokenInvalid');
  const email = typeof claims.email === 'string' && claims.email.trim() ? normalizeEmail(claims.email) : null;
  const name = typeof claims.name === 'string' ? claims.name.trim().slice(0, 100) : '';
  return { issuer: claims.iss, subject: claims.sub, email, emailVerified: claims.email_verified === true, name };
}

/** The provider's error code (RFC 6749 4.1.2.1: ASCII, no spaces) in the message; its free-text description is not shown. */
function providerRefusal(code: string): string {
  const safe = /^[\x21-\x7e]{1,64}$/.test(code) ? code : 'error';
  return `${SSO_MSG.providerRefused} (${safe})`;
}

/**
 * Ends a "Sign in with ...": checks the callback's state against the browser's cookie and the stored attempt (used
 * once), exchanges the code with the PKCE verifier, validates the ID token and its nonce, then finds, links or
 * creates the account and opens its session.
 */
export async function finishSsoSignIn(
  deps: SingleSignOnDeps,
  input: { query: URLSearchParams; cookieState: string | undefined; device: SessionDevice },
): Promise<SignedIn & { createdAccount: boolean }> {
  const state = input.query.get('state');
  if (!state || !input.cookieState || state.length > 200 || !sameState(state, input.cookieState)) throw refusal('stateInvalid');
  const attempt = await takeAttempt(deps.knex, state);
  // the provider the attempt started with, unchanged since (a provider removed or moved to another issuer meanwhile: start again)
  const workspaceProvider = attempt.workspace_id ? await providerOfWorkspace(deps.knex, deps.config, attempt.workspace_id) : null;
  const provider = attempt.workspace_id ? workspaceProvider?.config : deps.config.sso;
  if (!provider || provider.issuerUrl !== attempt.issuer) throw refusal('stateInvalid');
  const providerError = input.query.get('error');
  if (providerError !== null) throw refusal('providerRefused', 400, providerRefusal(providerError));
  const client = await clientConfiguration(provider, deps.logger);
  // the callback URL as registered (its query is the provider's answer): openid-client sends it as the redirect_uri
  const callbackUrl = new URL(ssoRedirectUri(deps.config.publicUrl));
  callbackUrl.search = input.query.toString();
  const claims = await exchangeCode(client, callbackUrl, attempt, state, deps.logger);
  // a workspace's provider vouches only for the addresses of the domains its workspace claimed
  if (workspaceProvider) {
    if (!claims.email) throw refusal('noEmail');
    if (!workspaceProvider.domains.includes(emailDomainOf(claims.email))) {
      throw new DomainError(403, WORKSPACE_SSO_CODES.emailOutsideDomains, WORKSPACE_SSO_MSG.emailOutsideDomains(workspaceProvider.displayName));
    }
  }
  const { user, createdAccount } = await accountForIdentity(deps.knex, claims);
  if (user.deletionRequestedAt) throw refusal('accountClosed', 403);
  const signedIn = await startSignedInSession(deps.knex, user, { sessionTtlDays: deps.config.sessionTtlDays, device: { ...input.device } }, 'single_sign_on');
  return { ...signedIn, createdAccount };
}

/** The account a provider's person signs in to: remembered, joined through a verified e-mail on both sides, or new. */
export async function accountForIdentity(knex: Knex, claims: SsoClaims): Promise<{ user: User; createdAccount: boolean }> {
  try {
    return await knex.transaction(async (trx) => {
      const identity = (await trx('user_identities').where({ issuer: claims.issuer, subject: claims.subject }).first()) as { id: string; user_id: string } | undefined;
      if (identity) {
        await trx('user_identities').where({ id: identity.id }).update({ last_sign_in_at: trx.fn.now(), ...(claims.email ? { email: claims.email } : {}) });
        const user = await User.query(trx).findById(identity.user_id).withGraphFetched('profile');
        if (!user) throw refusal('stateInvalid');
        return { user, createdAccount: false };
      }
      if (!claims.email) throw refusal('noEmail');
      const existing = await User.query(trx).findOne('email', claims.email).withGraphFetched('profile');
      if (existing) {
        if (!claims.emailVerified || !existing.emailVerifiedAt) throw refusal('linkRefused', 409);
        await trx('user_identities').insert({ issuer: claims.issuer, subject: claims.subject, user_id: existing.id, email: claims.email });
        return { user: existing, createdAccount: false };
      }
      // no password is ever told to anyone: "Forgot password?" sets one if the person wants one
      const passwordHash = await hashPassword(randomBytes(32).toString('base64url'));
      const created = await insertAccount(trx, { email: claims.email, passwordHash, name: claims.name, emailVerifiedAt: claims.emailVerified ? new Date() : null });
      await trx('user_identities').insert({ issuer: claims.issuer, subject: claims.subject, user_id: created.id, email: claims.email });
      const user = await User.query(trx).findById(created.id).withGraphFetched('profile');
      return { user: user ?? created, createdAccount: true };
    });
  } catch (err) {
    // the same person's two first sign-ins at once: the other one linked or created the account
    if (err instanceof UniqueViolationError) throw refusal('alreadyUsed', 409);
    throw err;
  }
}
