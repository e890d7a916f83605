import type { Knex } from 'knex';
import type { Context, Middleware } from 'koa';
import type { UserRole } from '../../db/models/User';
import type { TokenScope } from '../../domain/accessTokens';
import { ACCESS_TOKEN_MSG } from '../../domain/accessTokens';
import { authenticateAccessToken, isAccessToken, isTokenUser } from '../../services/accounts/accessTokens';
import type { SessionCache } from '../../services/accounts/sessionCache';
import { findSessionUser, touchSession } from '../../services/accounts/sessions';
import { SESSION_SEEN_EVERY_MS } from '../../domain/accountSecurity';
import { RequestError } from '../validation';
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter, type SignInLimits } from './rateLimit';

export const SESSION_COOKIE = 'rs_session';
/** The name when PUBLIC_URL is https: the browser keeps it only if Secure, for this host, on path / (no subdomain can set it). */
export const HOST_SESSION_COOKIE = '__Host-rs_session';

export const AUTH_MSG = {
  required: 'Authentication required',
  otherUser: 'You do not have permission to act for another user',
  adminOnly: 'Admin access required',
} as const;

/** The signed-in user as routes see it (`currentUser(ctx)`). */
export interface AuthUser {
  id: string;
  email: string;
  role: UserRole;
  name: string;
}

/** A request made with a personal access token: which one, and the scopes it was given. */
export interface AccessTokenGrant {
  id: string;
  scopes: readonly TokenScope[];
}

interface AuthState {
  user?: AuthUser;
  sessionId?: string;
  /** set when the request is authenticated by a personal access token instead of a session */
  accessToken?: AccessTokenGrant;
}

function authState(ctx: Context): AuthState {
  return ctx.state as AuthState;
}

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(ctx: Context): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1] ?? null;
}

function cookieToken(ctx: Context): string | null {
  return ctx.cookies.get(HOST_SESSION_COOKIE) || ctx.cookies.get(SESSION_COOKIE) || null;
}

/** The personal access token of `Authorization: Bearer rs_pat_...`, or null (none, or a session token). */
export function bearerAccessToken(ctx: Context): string | null {
  const token = bearerToken(ctx);
  return token !== null && isAccessToken(token) ? token : null;
}

/** The access token the request was authenticated with, or null for a session (or no credential). */
export function currentAccessToken(ctx: Context): AccessTokenGrant | null {
  return authState(ctx).accessToken ?? null;
}

/** The session token from `Authorization: Bearer <token>`, else from the session cookie (under either name). */
export function sessionToken(ctx: Context): string | null {
  return bearerToken(ctx) ?? cookieToken(ctx);
}

/** Whether the request carries a session cookie (the credential a cross-site request could ride on). */
export function hasSessionCookie(ctx: Context): boolean {
  return cookieToken(ctx) !== null;
}

export interface SessionCookieConfig {
  publicUrl: string;
  /** COOKIE_SECURE: the site is served over HTTPS although PUBLIC_URL does not say so */
  cookieSecure: boolean;
}

/** The cookie's name and Secure flag: `__Host-` prefixed and Secure when PUBLIC_URL is https, Secure also with COOKIE_SECURE. */
export function sessionCookiePolicy(config: SessionCookieConfig): { name: string; secure: boolean } {
  const https = /^https:/i.test(config.publicUrl);
  return { name: https ? HOST_SESSION_COOKIE : SESSION_COOKIE, secure: https || config.cookieSecure };
}

/** Secure cookies go out even when this hop is plain HTTP (TLS usually ends at a proxy). */
function writeSessionCookie(ctx: Context, value: string, expires: Date, config: SessionCookieConfig): void {
  const { name, secure } = sessionCookiePolicy(config);
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(name, value, { httpOnly: true, sameSite: 'lax', secure, path: '/', expires, overwrite: true });
}

export function setSessionCookie(ctx: Context, token: string, expiresAt: Date, config: SessionCookieConfig): void {
  writeSessionCookie(ctx, token, expiresAt, config);
}

export function clearSessionCookie(ctx: Context, config: SessionCookieConfig): void {
  writeSessionCookie(ctx, '', new Date(0), config);
}

export interface RequireAuthOptions {
  /** A route's own 401 text for a request without a session (sent with code LOGIN_REQUIRED). */
  unauthenticatedMessage?: string;
}

/**
 * Loads the session's user into `ctx.state.user` or answers 401. Idempotent: the app-wide guard already ran
 * it for every non-public /api route, so routers may add it again for clarity at no cost. A public route
 * that checks the session itself passes `unauthenticatedMessage` to answer with its spec's text.
 */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AuthDeps {
  knex: Knex;
  sessions?: SessionCache;
  /** the sign-in limits bad access tokens count against (DEFAULT_SIGN_IN_LIMITS unless a test passes small ones) */
  signInLimits?: SignInLimits;
}

// one limiter per database and limits: its counters live in PostgreSQL, shared with the sign-in route's
const tokenLimiters = new WeakMap<Knex, Map<SignInLimits, SignInLimiter>>();

function tokenLimiter(deps: AuthDeps): SignInLimiter {
  const limits = deps.signInLimits ?? DEFAULT_SIGN_IN_LIMITS;
  const byLimits = tokenLimiters.get(deps.knex) ?? new Map<SignInLimits, SignInLimiter>();
  tokenLimiters.set(deps.knex, byLimits);
  let limiter = byLimits.get(limits);
  if (!limiter) byLimits.set(limits, (limiter = new SignInLimiter(deps.knex, limits)));
  return limiter;
}

/**
 * Authenticates a request whose bearer is a personal access token (`rs_pat_...`): loads its user into
 * `ctx.state.user` and the token's id and scopes into `ctx.state.accessToken`. An unknown, malformed, expired or
 * revoked token is 401, spends one of the address's sign-in points (api/middleware/rateLimit.ts: the sign-in limits
 * apply) and is logged with the reason, as a failed sign-in attempt; a locked address gets 429 before the token is
 * looked at. Does nothing when the request carries no access token or is already authenticated.
 */
export async function authenticateAccessTokenRequest(deps: AuthDeps, ctx: Context): Promise<void> {
  const state = authState(ctx);
  const token = bearerAccessToken(ctx);
  if (state.user || token === null) return;
  const ip = ctx.ip || 'unknown';
  const limiter = tokenLimiter(deps);
  try {
    await limiter.refuseLockedIp(ip);
  } catch (err) {
    if (err instanceof RequestError && err.status === 429) ctx.set('Retry-After', String(err.extra.retryAfterSeconds));
    throw err;
  }
  const found = await authenticateAccessToken(deps.knex, token, ip);
  if (!isTokenUser(found)) {
    ctx.state.log?.warn({ audit: 'access_token_refused', ip, prefix: token.slice(0, 12), ...found }, 'access token refused');
    await limiter.recordIpFailure(ip);
    throw new RequestError(401, ACCESS_TOKEN_MSG.invalid, 'ACCESS_TOKEN_INVALID');
  }
  state.user = found.user;
  state.accessToken = found.accessToken;
}

export function requireAuth(deps: AuthDeps, options: RequireAuthOptions = {}): Middleware {
  const unauthenticated = () =>
    options.unauthenticatedMessage === undefined
      ? new RequestError(401, AUTH_MSG.required)
      : new RequestError(401, options.unauthenticatedMessage, 'LOGIN_REQUIRED');
  const cache = deps.sessions;
  return async function requireAuthMiddleware(ctx, next) {
    const state = authState(ctx);
    if (state.user) return next();
    if (bearerAccessToken(ctx) !== null) {
      await authenticateAccessTokenRequest(deps, ctx);
      return next();
    }
    const found = await lookupSession(deps, ctx);
    if (!found) throw unauthenticated();
    const { sessionId, ...user } = found;
    state.user = user;
    state.sessionId = sessionId;
    // when the session was last seen (Account → Security), written at most once a minute
    await touchSession(deps.knex, sessionId, SESSION_SEEN_EVERY_MS);
    if (!cache || SAFE_METHODS.has(ctx.method)) return next();
    // a change the user makes to their own account (name, password, deletion) is seen by their very next request
    try {
      await next();
    } finally {
      cache.invalidateUser(user.id);
    }
  };
}

/**
 * The request's session and its user, or null when it carries none or one that is no longer valid (an access token
 * is no session: requireAuth authenticates it, and the route's token scope is checked, api/tokenScopes.ts).
 */
export async function lookupSession(deps: { knex: Knex; sessions?: SessionCache }, ctx: Context): Promise<(AuthUser & { sessionId: string }) | null> {
  const token = sessionToken(ctx);
  if (!token) return null;
  return deps.sessions ? deps.sessions.lookup(deps.knex, token) : findSessionUser(deps.knex, token);
}

/** The signed-in user; 401 when the request has none (a route mounted without requireAuth). */
export function currentUser(ctx: Context): AuthUser {
  const user = authState(ctx).user;
  if (!user) throw new RequestError(401, AUTH_MSG.required);
  return user;
}

export function currentSessionId(ctx: Context): string {
  const id = authState(ctx).sessionId;
  if (!id) throw new RequestError(401, AUTH_MSG.required);
  return id;
}

/**
 * For the specs' calls that carry a `userId`: the server acts for the session's user, so an absent or
 * matching id is fine and any other id is refused with 403. Returns the session's user.
 */
export function assertSelf(ctx: Context, userId?: string | null): AuthUser {
  const user = currentUser(ctx);
  if (userId !== undefined && userId !== null && userId !== '' && userId !== user.id) throw new RequestError(403, AUTH_MSG.otherUser);
  return user;
}

export const requireAdmin: Middleware = async function requireAdminMiddleware(ctx, next) {
  if (currentUser(ctx).role !== 'admin') throw new RequestError(403, AUTH_MSG.adminOnly);
  await next();
};

/**
 * The /api routes open without a session. Everything else under /api requires one (deny by default):
 * a router that needs a public route adds it here.
 */
export const PUBLIC_API_ROUTES: ReadonlyArray<{ method: string; path: string; prefix?: boolean }> = [
  { method: 'POST', path: '/api/auth/signup' },
  { method: 'POST', path: '/api/auth/signin' },
  { method: 'POST', path: '/api/auth/signout' },
  // the second step of a sign-in (its pending token is the credential) and signing in with a passkey
  { method: 'POST', path: '/api/auth/second-factor' },
  { method: 'POST', path: '/api/auth/passkey/options' },
  { method: 'POST', path: '/api/auth/passkey' },
  // a forgotten password and the links of account e-mails: the link's token is the credential
  { method: 'POST', path: '/api/auth/password-reset' },
  { method: 'POST', path: '/api/auth/password-reset/confirm' },
  { method: 'POST', path: '/api/auth/verify-email' },
  // who is signed in, or nobody: the page's first question, answered without a 401 for a signed-out visitor
  { method: 'GET', path: '/api/auth/session' },
  // single sign-on (api/routes/sso.ts): the provider list, the redirect to the provider and its redirect back
  { method: 'GET', path: '/api/auth/sso/providers' },
  { method: 'GET', path: '/api/auth/sso/start' },
  { method: 'GET', path: '/api/auth/sso/callback' },
  { method: 'POST', path: '/api/auth/sso/lookup' },
  { method: 'GET', path: '/api/health' },
  // expiring signed file links (storage/signedUrls.ts): the signature is the credential
  { method: 'GET', path: '/api/files/', prefix: true },
  // checks the session itself to answer 'Please login to upload files' (api/routes/uploads.ts)
  { method: 'POST', path: '/api/upload/renders' },
  // checks the session itself to answer 'You must be logged in to generate images' (api/routes/imageEdit.ts)
  { method: 'POST', path: '/api/ai-image-simple' },
  // checks the session itself to answer 'Please sign in to purchase credits' (api/routes/stripe.ts)
  { method: 'POST', path: '/api/stripe/create-checkout-session' },
  // Stripe calls it; the signature header is the credential
  { method: 'POST', path: '/api/stripe/webhook' },
  // fal calls it when a hosted job ends; its signature is the credential (api/routes/providerCallbacks.ts)
  { method: 'POST', path: '/api/provider-callbacks/fal' },
  // the API's own description and its reference page (api/routes/openapi.ts)
  { method: 'GET', path: '/api/openapi.json' },
  { method: 'GET', path: '/api/docs' },
  { method: 'GET', path: '/api/docs/assets/', prefix: true },
  // check the session themselves to answer 'User authentication required' (api/routes/videoAssembly.ts)
  { method: 'GET', path: '/api/video-assembly/clips' },
  { method: 'POST', path: '/api/video-assembly/dry-run' },
  { method: 'POST', path: '/api/video/assemble' },
  { method: 'GET', path: '/api/video/assemble' },
  // what an invitation link is for, shown before the invitee signs in or up: the token is the credential
  { method: 'GET', path: '/api/invitations/', prefix: true },
  // the link in a notification e-mail that turns them off: signed for its person (api/routes/notifications.ts)
  { method: 'GET', path: '/api/notifications/unsubscribe' },
  // a review link's guest (api/routes/guestReview.ts): the link's token, then the guest session of that link only
  { method: 'GET', path: '/api/guest/', prefix: true },
  { method: 'POST', path: '/api/guest/', prefix: true },
];

/** Lower-cased, decoded, without repeated or trailing slashes: the router matches case-insensitively. */
function normalizedPath(path: string): string | null {
  try {
    const decoded = decodeURIComponent(path).toLowerCase().replace(/\/{2,}/g, '/');
    return decoded.length > 1 ? decoded.replace(/\/$/, '') : decoded;
  } catch {
    return null;
  }
}

export function isPublicApiRoute(method: string, path: string): boolean {
  const normalized = normalizedPath(path);
  if (normalized === null) return false;
  const m = method === 'HEAD' ? 'GET' : method;
  return PUBLIC_API_ROUTES.some((r) => r.method === m && (r.prefix ? normalized.startsWith(r.path) : normalized === r.path));
}

export function isApiPath(path: string): boolean {
  const normalized = normalizedPath(path);
  // an undecodable path is treated as an API path: refused rather than waved through
  return normalized === null || normalized === '/api' || normalized.startsWith('/api/');
}

/** App-wide: every /api request that is not a public route needs a valid session. */
export function apiSessionGuard(deps: AuthDeps): Middleware {
  const auth = requireAuth(deps);
  return async function apiSessionGuardMiddleware(ctx, next) {
    if (!isApiPath(ctx.path) || isPublicApiRoute(ctx.method, ctx.path) || ctx.method === 'OPTIONS') return next();
    return auth(ctx, next);
  };
}
