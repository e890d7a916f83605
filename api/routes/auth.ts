import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { getAccount, signIn, signUp, type Account, type SignedIn } from '../../services/accounts/accounts';
import { completeSignIn, signInWithPasskey, type SecondFactorDeps } from '../../services/accounts/secondFactor';
import { passkeyAuthenticationOptions, relyingPartyOf } from '../../services/accounts/passkeys';
import { findPendingSignIn, pendingSignInUser } from '../../services/accounts/pendingSignIns';
import { credentialJson, secondFactorProof, webAuthnOptions } from '../twoFactorSchemas';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { endSession } from '../../services/accounts/sessions';
import type { AppDeps } from '../deps';
import { bearerAccessToken, clearSessionCookie, currentUser, lookupSession, requireAuth, sessionToken, setSessionCookie } from '../middleware/auth';
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter, signInRateLimit } from '../middleware/rateLimit';
import { parseBody, RequestError, requiredString, singleLine } from '../validation';
import { ACCESS_TOKEN_MSG } from '../../domain/accessTokens';
import { ACCOUNT_SECURITY_MSG } from '../../domain/accountSecurity';
import { confirmPasswordReset, requestPasswordReset, sendVerificationAtSignIn, verifyEmail } from '../../services/accounts/accountSecurity';
import { ActionLimiter } from '../../services/platform/actionLimiter';
import { actionLimited, answers, describeRoute, errorBody, okBody, timestamp } from '../openapi/describe';

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

const resetRequestBody = z.strictObject({ email });
const resetConfirmBody = z.strictObject({
  token: requiredString('Token').max(100),
  password: requiredString('Password').max(1024),
});
const verifyBody = z.strictObject({ token: requiredString('Token').max(100) });
const messageAnswer = z.object({ success: z.literal(true), message: z.string() });
const linkInvalid = { description: 'The link is unknown, used or expired (LINK_INVALID)', schema: errorBody };

export const accountView = answers<Account>()(
  z
    .object({ id: z.string(), email: z.string(), name: z.string(), role: z.enum(['user', 'admin']), emailVerified: z.boolean(), createdAt: timestamp })
    .meta({ id: 'Account' }),
);
const signedInAnswer = z.object({ success: z.literal(true), user: accountView, token: z.string(), expiresAt: timestamp });
const secondStepAnswer = z
  .object({
    success: z.literal(true),
    secondFactorRequired: z.literal(true),
    pendingToken: z.string().meta({ description: 'Names this sign-in in its second step (5 minutes, once, at most 5 wrong codes); no session yet' }),
    methods: z.array(z.enum(['totp', 'recovery', 'passkey'])),
    expiresAt: timestamp,
  })
  .meta({ id: 'SecondStepNeeded' });
const secondStepBody = z.strictObject({ pendingToken: requiredString('pendingToken').max(100), proof: secondFactorProof });
const passkeyOptionsBody = z.strictObject({ pendingToken: z.string().max(100).optional() });
const passkeySignInBody = z.strictObject({ challengeId: requiredString('challengeId').max(100), response: credentialJson });
const secondStepRefused = {
  description: 'A wrong code or a passkey that did not verify (INVALID_SECOND_FACTOR, counts as a failed sign-in), or the pending sign-in expired, was used or took 5 wrong codes (SIGN_IN_EXPIRED)',
  schema: errorBody,
};
const rateLimited = {
  description: 'Too many failed sign-ins for this account from this address, or from this address: the message says when to retry',
  schema: errorBody.extend({ retryAfterSeconds: z.number().int() }),
  headers: { 'Retry-After': { description: 'Seconds until the next attempt is allowed', schema: z.string() } },
};

export function authRouter(deps: AppDeps): Router {
  const router = new Router();
  const limiter = new SignInLimiter(deps.knex, deps.signInLimits ?? DEFAULT_SIGN_IN_LIMITS);
  const ttl = { sessionTtlDays: deps.config.sessionTtlDays };
  const actionLimiter = new ActionLimiter(deps.knex, deps.actionLimits);
  const security = { knex: deps.knex, config: deps.config, logger: deps.logger };
  const device = (ctx: Context) => ({ ...ttl, device: { userAgent: ctx.get('user-agent') || null, ipAddress: ctx.ip || null } });

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
    const result = await signUp(deps.knex, parseBody(ctx, signUpBody), device(ctx));
    await sendVerificationAtSignIn(security, result.user.id);
    answerSignedIn(ctx, result, 201);
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/signin',
    tag: 'Auth',
    summary: 'Sign in: sets the session cookie and answers the token for Bearer use',
    access: 'public',
    body: signInBody,
    description:
      'An account with two-factor sign-in answers `secondFactorRequired` and a pending token instead of a session: POST /api/auth/second-factor (or a passkey) completes it.',
    responses: {
      200: { description: 'Signed in, or the second step is needed', schema: z.union([signedInAnswer, secondStepAnswer]) },
      401: { description: 'Wrong e-mail or password', schema: errorBody },
      403: { description: "The address's domain must sign in through its workspace's single sign-on (SSO_REQUIRED); checked after the password, owners of that workspace exempt", schema: errorBody },
      429: rateLimited,
    },
  });
  router.post('/api/auth/signin', signInRateLimit(limiter), async (ctx) => {
    const result = await signIn(deps.knex, parseBody(ctx, signInBody), device(ctx));
    // an account from before verification existed (or whose link expired) gets a link now
    if (!result.user.emailVerified) await sendVerificationAtSignIn(security, result.user.id);
    if ('secondStep' in result) {
      const { token, methods, expiresAt } = result.secondStep;
      ctx.body = { success: true, secondFactorRequired: true, pendingToken: token, methods, expiresAt };
      return;
    }
    answerSignedIn(ctx, result, 200);
  });

  const factors: SecondFactorDeps = { knex: deps.knex, encryptionKey: deps.config.totpEncryptionKey, rp: relyingPartyOf(deps.config.publicUrl) };
  const signInLimits = deps.signInLimits ?? DEFAULT_SIGN_IN_LIMITS;
  // the second step and passkey sign-ins count like passwords, in counters of their own
  const secondStepLimiter = new SignInLimiter(deps.knex, { ...signInLimits, keyPrefix: `${signInLimits.keyPrefix}_2fa` });
  const passkeyLimiter = new SignInLimiter(deps.knex, { ...signInLimits, keyPrefix: `${signInLimits.keyPrefix}_passkey` });
  const pendingPerson = async (ctx: Context) => {
    const token = (ctx.request as { body?: { pendingToken?: unknown } }).body?.pendingToken;
    return typeof token === 'string' ? ((await pendingSignInUser(deps.knex, token)) ?? undefined) : undefined;
  };
  const passkeyOf = (ctx: Context) => {
    const id = (ctx.request as { body?: { response?: { id?: unknown } } }).body?.response?.id;
    return typeof id === 'string' && id !== '' ? id.slice(0, 1024) : undefined;
  };

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/second-factor',
    tag: 'Auth',
    summary: 'The second step of a sign-in: a code from the authenticator app, a recovery code (each good once) or a passkey; sets the session',
    description: 'Rate-limited like the password (per account and address, per address, and slowed per account). For a passkey, get its challenge from POST /api/auth/passkey/options with the pendingToken.',
    access: 'public',
    body: secondStepBody,
    responses: { 200: signedInAnswer, 401: secondStepRefused, 429: rateLimited },
  });
  router.post('/api/auth/second-factor', signInRateLimit(secondStepLimiter, { accountOf: pendingPerson }), async (ctx) => {
    const { pendingToken, proof } = parseBody(ctx, secondStepBody);
    const result = await completeSignIn(factors, { pendingToken, proof: proof as Parameters<typeof completeSignIn>[1]['proof'] }, device(ctx));
    answerSignedIn(ctx, result, 200);
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/passkey/options',
    tag: 'Auth',
    summary: "A challenge for navigator.credentials.get(): the pending sign-in's passkeys (with pendingToken), or any passkey of this site (\"Sign in with a passkey\")",
    description: 'The challenge is good 5 minutes, once. 60 per 10 minutes per client address.',
    access: 'public',
    body: passkeyOptionsBody,
    responses: { 200: z.object({ success: z.literal(true), challengeId: z.string(), options: webAuthnOptions }), 401: secondStepRefused, 429: actionLimited },
  });
  router.post('/api/auth/passkey/options', async (ctx) => {
    const { pendingToken } = parseBody(ctx, passkeyOptionsBody);
    await actionLimiter.take('passkeyChallenge', { address: ctx.ip || 'unknown' });
    const userId = pendingToken ? (await findPendingSignIn(deps.knex, pendingToken)).userId : null;
    const { challengeId, options } = await passkeyAuthenticationOptions(deps.knex, factors.rp, userId);
    ctx.body = { success: true, challengeId, options };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/passkey',
    tag: 'Auth',
    summary: 'Sign in with a passkey alone (a discoverable passkey with user verification): sets the session',
    description: 'Rate-limited like the password, per passkey and address.',
    access: 'public',
    body: passkeySignInBody,
    responses: { 200: signedInAnswer, 401: secondStepRefused, 429: rateLimited },
  });
  router.post('/api/auth/passkey', signInRateLimit(passkeyLimiter, { accountOf: passkeyOf }), async (ctx) => {
    const { challengeId, response } = parseBody(ctx, passkeySignInBody);
    const result = await signInWithPasskey(factors, { challengeId, response: response as unknown as AuthenticationResponseJSON }, device(ctx));
    answerSignedIn(ctx, result, 200);
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/password-reset',
    tag: 'Auth',
    summary: 'Ask for a password reset link (valid 1 hour, single use) by e-mail: the same answer whether or not the address has an account',
    description: 'Limited to 3 requests an hour per e-mail address and 20 an hour per client address, counted whether or not the address has an account.',
    access: 'public',
    body: resetRequestBody,
    responses: {
      202: messageAnswer,
      403: { description: "The address's domain must sign in through its workspace's single sign-on (SSO_REQUIRED): the same answer for every address of it; an owner of that workspace still gets the link", schema: errorBody },
      429: actionLimited,
    },
  });
  router.post('/api/auth/password-reset', async (ctx) => {
    const { email: address } = parseBody(ctx, resetRequestBody);
    await actionLimiter.take('passwordReset', { email: address.trim().toLowerCase(), address: ctx.ip || 'unknown' });
    await requestPasswordReset(security, address);
    ctx.status = 202;
    ctx.body = { success: true, message: ACCOUNT_SECURITY_MSG.resetRequested };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/password-reset/confirm',
    tag: 'Auth',
    summary: "Set a new password with a reset link's token: ends every session of the account (access tokens stay)",
    access: 'public',
    body: resetConfirmBody,
    responses: { 200: messageAnswer, 400: linkInvalid },
  });
  router.post('/api/auth/password-reset/confirm', async (ctx) => {
    const input = parseBody(ctx, resetConfirmBody);
    await confirmPasswordReset(deps.knex, input);
    // this browser's session (if any) ended with the others
    clearSessionCookie(ctx, deps.config);
    ctx.body = { success: true, message: ACCOUNT_SECURITY_MSG.passwordResetDone };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/verify-email',
    tag: 'Auth',
    summary: "Open a verification link: verifies the account's address, or makes a requested new address the account's",
    access: 'public',
    body: verifyBody,
    responses: { 200: messageAnswer.extend({ changedEmail: z.boolean() }), 400: linkInvalid, 409: { description: 'The new address has an account by now', schema: errorBody } },
  });
  router.post('/api/auth/verify-email', async (ctx) => {
    const { token } = parseBody(ctx, verifyBody);
    const { changedEmail } = await verifyEmail(deps.knex, token);
    ctx.body = { success: true, changedEmail, message: changedEmail ? ACCOUNT_SECURITY_MSG.emailChanged : ACCOUNT_SECURITY_MSG.emailVerified };
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
