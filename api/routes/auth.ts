import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { getAccount, signIn, signUp, type Account, type SignedIn } from '../../services/accounts/accounts';
import { endSession } from '../../services/accounts/sessions';
import type { AppDeps } from '../deps';
import { bearerAccessToken, clearSessionCookie, currentUser, lookupSession, requireAuth, sessionToken, setSessionCookie } from '../middleware/auth';
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter, signInRateLimit } from '../middleware/rateLimit';
import { parseBody, RequestError, requiredString, singleLine } from '../validation';
import { ACCESS_TOKEN_MSG } from '../../domain/accessTokens';
import { answers, describeRoute, errorBody, okBody, timestamp } from '../openapi/describe';

const email = singleLine(requiredString('Email').trim(), 'Email').max(254).pipe(z.email({ error: 'Please enter a valid email address' }));

const signUpBody = z.strictObject({
  name: singleLine(z.string({ error: 'Name must be a string' }), 'Name').max(200).optional(),
  email,
  password: requiredString('Password').max(1024),
});

const signInBody = z.strictObject({
  email: singleLine(requiredString('Email').trim(), 'Email').min(1, { error: 'Email is required' }).max(254),
  password: requiredString('Password').min(1, { error: 'Password is required' }).max(1024),
});

const signOutBody = z.strictObject({});

export const accountView = answers<Account>()(
  z.object({ id: z.string(), email: z.string(), name: z.string(), role: z.enum(['user', 'admin']), createdAt: timestamp }).meta({ id: 'Account' }),
);
const signedInAnswer = z.object({ success: z.literal(true), user: accountView, token: z.string(), expiresAt: timestamp });
const rateLimited = {
  description: 'Too many failed sign-ins for this account from this address, or from this address: the message says when to retry',
  schema: errorBody.extend({ retryAfterSeconds: z.number().int() }),
  headers: { 'Retry-After': { description: 'Seconds until the next attempt is allowed', schema: z.string() } },
};

export function authRouter(deps: AppDeps): Router {
  const router = new Router();
  const limiter = new SignInLimiter(deps.knex, deps.signInLimits ?? DEFAULT_SIGN_IN_LIMITS);
  const ttl = { sessionTtlDays: deps.config.sessionTtlDays };

  function answerSignedIn(ctx: Context, result: SignedIn, status: number): void {
    setSessionCookie(ctx, result.session.token, result.session.expiresAt, deps.config);
    ctx.status = status;
    ctx.body = { success: true, user: result.user, token: result.session.token, expiresAt: result.session.expiresAt };
  }

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/signup',
    tag: 'Auth',
    summary: 'Create an account (5 free credits) and sign in',
    access: 'public',
    body: signUpBody,
    responses: { 201: signedInAnswer, 409: { description: 'An account with this e-mail exists', schema: errorBody } },
  });
  router.post('/api/auth/signup', async (ctx) => {
    answerSignedIn(ctx, await signUp(deps.knex, parseBody(ctx, signUpBody), ttl), 201);
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/signin',
    tag: 'Auth',
    summary: 'Sign in: sets the session cookie and answers the token for Bearer use',
    access: 'public',
    body: signInBody,
    responses: { 200: signedInAnswer, 401: { description: 'Wrong e-mail or password', schema: errorBody }, 429: rateLimited },
  });
  router.post('/api/auth/signin', signInRateLimit(limiter), async (ctx) => {
    answerSignedIn(ctx, await signIn(deps.knex, parseBody(ctx, signInBody), ttl), 200);
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/signout',
    tag: 'Auth',
    summary: 'End the session (the Bearer token or the cookie) and clear the cookie',
    access: 'public',
    body: { contentType: 'application/json', schema: signOutBody, required: false },
    responses: { 200: okBody, 400: { description: 'The bearer is a personal access token (ACCESS_TOKEN_NOT_SIGNED_OUT): tokens are revoked, not signed out', schema: errorBody }, 403: { description: 'A cookie-authenticated request from another site (CSRF)', schema: errorBody } },
  });
  router.post('/api/auth/signout', async (ctx) => {
    parseBody(ctx, signOutBody);
    // a token would answer 200 and keep working: say what ends it instead
    if (bearerAccessToken(ctx)) throw new RequestError(400, ACCESS_TOKEN_MSG.notSignedOut, 'ACCESS_TOKEN_NOT_SIGNED_OUT');
    const token = sessionToken(ctx);
    if (token) await endSession(deps.knex, token);
    clearSessionCookie(ctx, deps.config);
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/auth/me',
    tag: 'Auth',
    summary: 'The signed-in account',
    access: 'session',
    workspace: 'self',
    responses: { 200: z.object({ success: z.literal(true), user: accountView }), 404: { description: 'The account is gone', schema: errorBody } },
  });
  router.get('/api/auth/me', requireAuth(deps), async (ctx) => {
    ctx.body = { success: true, user: await getAccount(deps.knex, currentUser(ctx).id) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/auth/session',
    tag: 'Auth',
    summary: 'Who is signed in: the account, or null for a visitor without a valid session (never a 401)',
    access: 'public',
    responses: { 200: z.object({ success: z.literal(true), user: accountView.nullable() }) },
  });
  router.get('/api/auth/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const session = await lookupSession(deps, ctx);
    ctx.body = { success: true, user: session ? await getAccount(deps.knex, session.id) : null };
  });

  return router;
}
