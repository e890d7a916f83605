import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { PASSKEY_NAME_MAX, TWO_FACTOR_MSG } from '../../domain/twoFactor';
import { passkeyAuthenticationOptions, passkeyRegistrationOptions, registerPasskey, relyingPartyOf, renamePasskey } from '../../services/accounts/passkeys';
import {
  afterPasskeyAdded,
  confirmForSession,
  deletePasskey,
  disableTotp,
  enableTotp,
  regenerateRecoveryCodes,
  twoFactorStatus,
  type SecondFactorDeps,
  type SecondFactorProof,
} from '../../services/accounts/secondFactor';
import { beginTotpSetup } from '../../services/accounts/totp';
import type { AppDeps } from '../deps';
import { currentSessionId, currentUser, requireAuth } from '../middleware/auth';
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter, signInRateLimit } from '../middleware/rateLimit';
import { describeRoute, errorBody, timestamp } from '../openapi/describe';
import { credentialJson, secondFactorProof, webAuthnOptions } from '../twoFactorSchemas';
import { parse, parseBody, requiredString, singleLine } from '../validation';

const TAG = 'Two-factor sign-in';

const emptyBody = z.strictObject({});
const codeBody = z.strictObject({ code: requiredString('code').trim().min(1, { error: TWO_FACTOR_MSG.codeRequired }).max(40) });
const passkeyName = singleLine(z.string({ error: TWO_FACTOR_MSG.passkeyNameRequired }).trim(), 'Passkey name')
  .min(1, { error: TWO_FACTOR_MSG.passkeyNameRequired })
  .max(PASSKEY_NAME_MAX, { error: TWO_FACTOR_MSG.passkeyNameTooLong });
const registerBody = z.strictObject({ challengeId: requiredString('challengeId').max(100), name: passkeyName, response: credentialJson });
const renameBody = z.strictObject({ name: passkeyName });
const confirmBody = z.strictObject({ proof: secondFactorProof });
const passkeyParams = z.object({ passkeyId: z.string() });

const passkeyView = z
  .object({ id: z.string(), name: z.string(), createdAt: timestamp, lastUsedAt: timestamp.nullable(), backedUp: z.boolean() })
  .meta({ id: 'Passkey' });
const statusView = z
  .object({
    enabled: z.boolean(),
    totp: z.boolean(),
    passkeys: z.array(passkeyView),
    recoveryCodesLeft: z.number().int(),
    confirmedUntil: timestamp.nullable().meta({ description: 'Until when this session may turn factors off without confirming again; null: it must confirm first' }),
  })
  .meta({ id: 'TwoFactorStatus' });
const recoveryCodesAnswer = z.array(z.string()).nullable().meta({ description: 'The 10 recovery codes, shown this once (null: the account already has its codes)' });
const challengeAnswer = z.object({ success: z.literal(true), challengeId: z.string(), options: webAuthnOptions });
const freshFactorNeeded = { description: 'Confirm a second factor first (SECOND_FACTOR_NEEDED): POST /api/account/two-factor/confirm', schema: errorBody };
const invalid = { description: 'The code is wrong or the passkey did not verify (INVALID_SECOND_FACTOR, PASSKEY_REFUSED)', schema: errorBody };
const notFound = { description: 'No such passkey of this account (PASSKEY_NOT_FOUND)', schema: errorBody };

/**
 * /api/account/two-factor/*: Account → Security's two-factor sign-in (DESIGN.md "Accounts"): the authenticator app,
 * passkeys, recovery codes, and "Confirm it's you" (a fresh second factor, which turning factors off needs). With a
 * session only, never a personal access token.
 */
export function twoFactorRouter(deps: AppDeps): Router {
  const router = new Router();
  router.use(requireAuth(deps));
  const factors: SecondFactorDeps = { knex: deps.knex, encryptionKey: deps.config.totpEncryptionKey, rp: relyingPartyOf(deps.config.publicUrl) };
  const limits = deps.signInLimits ?? DEFAULT_SIGN_IN_LIMITS;
  // a session's guesses at its own second factor count like sign-in failures, per person and address
  const confirmLimiter = new SignInLimiter(deps.knex, { ...limits, keyPrefix: `${limits.keyPrefix}_confirm` });
  const actor = (ctx: Context) => ({ userId: currentUser(ctx).id, sessionId: currentSessionId(ctx) });
  const self = { access: 'session', workspace: 'self', sessionOnly: true, tag: TAG } as const;

  describeRoute(router, {
    ...self,
    method: 'get',
    path: '/api/account/two-factor',
    summary: "The account's two-factor sign-in: the authenticator app, passkeys, recovery codes left, and whether this session confirmed recently",
    responses: { 200: z.object({ success: z.literal(true), twoFactor: statusView }) },
  });
  router.get('/api/account/two-factor', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const { userId, sessionId } = actor(ctx);
    ctx.body = { success: true, twoFactor: await twoFactorStatus(deps.knex, userId, sessionId) };
  });

  describeRoute(router, {
    ...self,
    method: 'post',
    path: '/api/account/two-factor/totp',
    summary: 'Start setting up an authenticator app: a new secret with its QR code (made on the server, a PNG data URL); a first code confirms it',
    body: { contentType: 'application/json', schema: emptyBody, required: false },
    responses: {
      200: z.object({ success: z.literal(true), secret: z.string(), otpauthUrl: z.string(), qrCode: z.string() }),
      409: { description: 'An authenticator app is already set up (TOTP_ALREADY_SET_UP)', schema: errorBody },
    },
  });
  router.post('/api/account/two-factor/totp', async (ctx) => {
    parseBody(ctx, emptyBody);
    ctx.set('Cache-Control', 'no-store');
    const user = currentUser(ctx);
    ctx.body = { success: true, ...(await beginTotpSetup(factors, { id: user.id, email: user.email })) };
  });

  describeRoute(router, {
    ...self,
    method: 'post',
    path: '/api/account/two-factor/totp/confirm',
    summary: "Confirm the authenticator app with its first code: two-factor sign-in is on; the account's first factor answers its 10 recovery codes",
    body: codeBody,
    responses: {
      200: z.object({ success: z.literal(true), recoveryCodes: recoveryCodesAnswer }),
      400: invalid,
      409: { description: 'No set-up was started (TOTP_SETUP_MISSING)', schema: errorBody },
    },
  });
  router.post('/api/account/two-factor/totp/confirm', async (ctx) => {
    const { code } = parseBody(ctx, codeBody);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await enableTotp(factors, currentUser(ctx).id, code)) };
  });

  describeRoute(router, {
    ...self,
    method: 'delete',
    path: '/api/account/two-factor/totp',
    summary: 'Remove the authenticator app (needs a second factor confirmed in the last 10 minutes); with no passkey left, two-factor sign-in is off',
    responses: { 200: z.object({ success: z.literal(true), enabled: z.boolean() }), 403: freshFactorNeeded, 409: { description: 'No authenticator app is set up (TWO_FACTOR_OFF)', schema: errorBody } },
  });
  router.delete('/api/account/two-factor/totp', async (ctx) => {
    ctx.body = { success: true, ...(await disableTotp(deps.knex, actor(ctx))) };
  });

  describeRoute(router, {
    ...self,
    method: 'post',
    path: '/api/account/two-factor/recovery-codes',
    summary: 'Make 10 new recovery codes (the old ones stop working; needs a second factor confirmed in the last 10 minutes)',
    body: { contentType: 'application/json', schema: emptyBody, required: false },
    responses: { 200: z.object({ success: z.literal(true), recoveryCodes: z.array(z.string()) }), 403: freshFactorNeeded, 409: { description: 'Two-factor sign-in is off (TWO_FACTOR_OFF)', schema: errorBody } },
  });
  router.post('/api/account/two-factor/recovery-codes', async (ctx) => {
    parseBody(ctx, emptyBody);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, recoveryCodes: await regenerateRecoveryCodes(deps.knex, actor(ctx)) };
  });

  describeRoute(router, {
    ...self,
    method: 'post',
    path: '/api/account/two-factor/passkeys/options',
    summary: 'A challenge for navigator.credentials.create(): registers a passkey of this account (5 minutes, once)',
    body: { contentType: 'application/json', schema: emptyBody, required: false },
    responses: { 200: challengeAnswer, 409: { description: 'The account has 10 passkeys (TOO_MANY_PASSKEYS)', schema: errorBody } },
  });
  router.post('/api/account/two-factor/passkeys/options', async (ctx) => {
    parseBody(ctx, emptyBody);
    const user = currentUser(ctx);
    ctx.body = { success: true, ...(await passkeyRegistrationOptions(deps.knex, factors.rp, user)) };
  });

  describeRoute(router, {
    ...self,
    method: 'post',
    path: '/api/account/two-factor/passkeys',
    summary: "Keep a new passkey under a name: the browser's answer to the challenge, checked; the account's first factor answers its 10 recovery codes",
    body: registerBody,
    responses: { 201: z.object({ success: z.literal(true), passkey: passkeyView, recoveryCodes: recoveryCodesAnswer }), 400: invalid },
  });
  router.post('/api/account/two-factor/passkeys', async (ctx) => {
    const { challengeId, name, response } = parseBody(ctx, registerBody);
    const userId = currentUser(ctx).id;
    const passkey = await registerPasskey(deps.knex, factors.rp, userId, { challengeId, name, response: response as unknown as RegistrationResponseJSON });
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = { success: true, passkey, ...(await afterPasskeyAdded(deps.knex, userId)) };
  });

  describeRoute(router, {
    ...self,
    method: 'patch',
    path: '/api/account/two-factor/passkeys/:passkeyId',
    summary: 'Rename a passkey',
    params: passkeyParams,
    body: renameBody,
    responses: { 200: z.object({ success: z.literal(true), passkey: passkeyView }), 404: notFound },
  });
  router.patch('/api/account/two-factor/passkeys/:passkeyId', async (ctx) => {
    const { passkeyId } = parse(passkeyParams, ctx.params);
    const { name } = parseBody(ctx, renameBody);
    ctx.body = { success: true, passkey: await renamePasskey(deps.knex, currentUser(ctx).id, passkeyId, name) };
  });

  describeRoute(router, {
    ...self,
    method: 'delete',
    path: '/api/account/two-factor/passkeys/:passkeyId',
    summary: 'Remove a passkey (needs a second factor confirmed in the last 10 minutes); with no factor left, two-factor sign-in is off',
    params: passkeyParams,
    responses: { 200: z.object({ success: z.literal(true), enabled: z.boolean() }), 403: freshFactorNeeded, 404: notFound },
  });
  router.delete('/api/account/two-factor/passkeys/:passkeyId', async (ctx) => {
    const { passkeyId } = parse(passkeyParams, ctx.params);
    ctx.body = { success: true, ...(await deletePasskey(deps.knex, actor(ctx), passkeyId)) };
  });

  describeRoute(router, {
    ...self,
    method: 'post',
    path: '/api/account/two-factor/confirm/options',
    summary: "A challenge for confirming with one of this account's passkeys (5 minutes, once)",
    body: { contentType: 'application/json', schema: emptyBody, required: false },
    responses: { 200: challengeAnswer },
  });
  router.post('/api/account/two-factor/confirm/options', async (ctx) => {
    parseBody(ctx, emptyBody);
    ctx.body = { success: true, ...(await passkeyAuthenticationOptions(deps.knex, factors.rp, currentUser(ctx).id)) };
  });

  describeRoute(router, {
    ...self,
    method: 'post',
    path: '/api/account/two-factor/confirm',
    summary: "\"Confirm it's you\": a code from the app, a recovery code or a passkey; for 10 minutes this session may turn factors off and make new recovery codes",
    description: 'Wrong answers count like failed sign-ins (per person and address).',
    body: confirmBody,
    responses: {
      200: z.object({ success: z.literal(true), confirmedUntil: timestamp }),
      400: invalid,
      409: { description: 'Two-factor sign-in is off (TWO_FACTOR_OFF)', schema: errorBody },
      429: { description: 'Too many wrong answers (RATE_LIMITED): the message says when to retry', schema: errorBody },
    },
  });
  router.post('/api/account/two-factor/confirm', signInRateLimit(confirmLimiter, { accountOf: (ctx) => currentUser(ctx).id }), async (ctx) => {
    const { proof } = parseBody(ctx, confirmBody);
    const confirmedUntil = await confirmForSession(factors, actor(ctx), proof as SecondFactorProof);
    ctx.body = { success: true, confirmedUntil };
  });

  return router;
}


