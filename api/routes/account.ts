import Router from '@koa/router';
import { z } from 'zod';
import { ACCOUNT_DATA_MESSAGES, type AccountDeletionAnswer, type DataExportView } from '../../domain/accountData';
import { actionLimited, answers, describeRoute, errorBody, okBody, timestamp } from '../openapi/describe';
import { ACCOUNT_SECURITY_CODES, ACCOUNT_SECURITY_MSG } from '../../domain/accountSecurity';
import { requestEmailChange, sendVerification } from '../../services/accounts/accountSecurity';
import { endOtherSessions, endSessionById, listSessions, sessionIdForHandle } from '../../services/accounts/sessions';
import { describeDevice } from '../../services/accounts/sessionDevices';
import { ActionLimiter } from '../../services/platform/actionLimiter';
import { DomainError } from '../../domain/errors';
import { AccountDataService } from '../../services/accounts/accountData';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { createStorage } from '../../storage';
import { TASK_QUEUES } from '../../domain/taskQueues';
import type { AppDeps } from '../deps';
import { clearSessionCookie, currentSessionId, currentUser, requireAuth } from '../middleware/auth';
import { parseBody, requiredString } from '../validation';

const exportBody = z.strictObject({});

const deleteBody = z.strictObject({
  confirmEmail: z
    .string({ error: (issue) => (issue.input === undefined ? ACCOUNT_DATA_MESSAGES.confirmEmailRequired : 'confirmEmail must be a string') })
    .max(320, { error: ACCOUNT_DATA_MESSAGES.confirmEmailMismatch }),
});

const emptyBody = z.strictObject({});
const emailChangeBody = z.strictObject({
  email: requiredString('Email').trim().max(254).pipe(z.email({ error: 'Please enter a valid email address' })),
  password: requiredString('Password').max(1024),
});
const sessionView = z
  .object({
    id: z.string().meta({ description: "The session's public handle (never its token)" }),
    device: z.string().meta({ description: "Browser and system read from the session's user agent" }),
    userAgent: z.string().nullable(),
    ipAddress: z.string().nullable(),
    authenticatedWith: z.enum(['password', 'sign_up', 'password_reset', 'two_factor', 'passkey', 'single_sign_on']),
    createdAt: timestamp,
    lastSeenAt: timestamp,
    current: z.boolean(),
  })
  .meta({ id: 'AccountSession' });

const exportView = answers<DataExportView>()(
  z.object({
    id: z.string(),
    number: z.number().int(),
    workflowId: z.string(),
    status: z.enum(['pending', 'processing', 'completed', 'failed', 'expired']),
    progress: z.number(),
    message: z.string(),
    error: z.string().nullable(),
    downloadUrl: z.string().nullable(),
    fileName: z.string().nullable(),
    sizeBytes: z.number().nullable(),
    fileCount: z.number().nullable(),
    createdAt: z.string(),
    completedAt: z.string().nullable(),
    expiresAt: z.string().nullable(),
  }),
);
const deletionAnswer = answers<AccountDeletionAnswer>()(z.object({ success: z.literal(true), status: z.enum(['deleting', 'deleted']), workflowId: z.string() }));

/** /api/account/*: data exports (request, latest with progress or link) and account deletion. */
export function accountRouter(deps: AppDeps): Router {
  const service = new AccountDataService({
    knex: deps.knex,
    storage: createStorage(deps.config),
    client: () => getTemporalClient(deps.config),
    taskQueue: deps.taskQueues?.accountData ?? TASK_QUEUES.accountData,
    logger: deps.logger,
  });
  const router = new Router();
  router.use(requireAuth(deps));

  describeRoute(router, {
    method: 'post',
    path: '/api/account/exports',
    tag: 'Account',
    summary: "Start an export of the user's data and files (a zip, linked for 24 hours): their personal workspace and the list of their memberships",
    access: 'session',
    workspace: 'self',
    body: { contentType: 'application/json', schema: exportBody, required: false },
    responses: { 202: z.object({ success: z.literal(true), export: exportView }) },
  });
  router.post('/api/account/exports', async (ctx) => {
    parseBody(ctx, exportBody);
    ctx.status = 202;
    ctx.body = { success: true, export: await service.requestExport(currentUser(ctx).id) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/account/exports',
    tag: 'Account',
    summary: 'The latest export with its progress or download link',
    access: 'session',
    workspace: 'self',
    responses: { 200: z.object({ success: z.literal(true), export: exportView.nullable() }) },
  });
  router.get('/api/account/exports', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, export: await service.latestExport(currentUser(ctx).id) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/account/delete',
    tag: 'Account',
    summary: "Delete the account: cancels the user's runs, releases reservations, removes files and rows; signs out",
    description:
      "confirmEmail must be the account's e-mail. Refused (409 ONLY_OWNER, naming the workspaces) while the user is the only owner of a workspace " +
      'with other members. The personal workspace goes with the account, everything in it, unless its ownership was transferred: then it stays ' +
      "with its new owner. In shared workspaces the user's running jobs are cancelled; their approved content and ledger rows stay ('deleted account').",
    access: 'session',
    workspace: 'self',
    body: deleteBody,
    responses: {
      202: deletionAnswer,
      409: { description: 'The user is the only owner of a workspace with other members: transfer its ownership first', schema: errorBody },
    },
  });
  router.post('/api/account/delete', async (ctx) => {
    const { confirmEmail } = parseBody(ctx, deleteBody);
    const answer = await service.requestDeletion(currentUser(ctx).id, confirmEmail);
    // every session already ended on the server; the browser forgets its cookie too
    clearSessionCookie(ctx, deps.config);
    ctx.status = 202;
    ctx.body = answer;
  });

  const limiter = new ActionLimiter(deps.knex, deps.actionLimits);
  const security = { knex: deps.knex, config: deps.config, logger: deps.logger };

  describeRoute(router, {
    method: 'post',
    path: '/api/account/verification',
    tag: 'Account',
    summary: "Send the account's verification link again (valid 24 hours; earlier links stop working); 3 an hour",
    access: 'session',
    workspace: 'self',
    body: { contentType: 'application/json', schema: emptyBody, required: false },
    responses: {
      202: z.object({ success: z.literal(true), sent: z.boolean(), message: z.string() }),
      409: { description: 'The address is already verified (ALREADY_VERIFIED)', schema: errorBody },
      429: actionLimited,
    },
  });
  router.post('/api/account/verification', async (ctx) => {
    parseBody(ctx, emptyBody);
    const user = currentUser(ctx);
    await limiter.take('verificationEmail', { person: user.id });
    const sent = await sendVerification(security, user.id);
    ctx.status = 202;
    ctx.body = { success: true, sent, message: ACCOUNT_SECURITY_MSG.verificationSent };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/account/email',
    tag: 'Account',
    summary: 'Change the e-mail address: a link to the new address confirms it (valid 24 hours), and the old address is told; 3 an hour',
    description: 'The address stays as it is until the link is opened (POST /api/auth/verify-email). Needs the current password.',
    access: 'session',
    workspace: 'self',
    body: emailChangeBody,
    responses: {
      202: z.object({ success: z.literal(true), sent: z.boolean(), message: z.string() }),
      400: { description: 'Wrong password (CURRENT_PASSWORD_INCORRECT) or the same address (SAME_EMAIL)', schema: errorBody },
      409: { description: 'The new address has an account (EMAIL_TAKEN)', schema: errorBody },
      429: actionLimited,
    },
  });
  router.post('/api/account/email', async (ctx) => {
    const input = parseBody(ctx, emailChangeBody);
    const user = currentUser(ctx);
    await limiter.take('emailChange', { person: user.id });
    const { sent, email } = await requestEmailChange(security, user.id, input);
    ctx.status = 202;
    ctx.body = { success: true, sent, message: ACCOUNT_SECURITY_MSG.emailChangeSent(email) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/account/sessions',
    tag: 'Account',
    summary: "The account's open sessions: device, address, started, last seen, and which one is this",
    access: 'session',
    workspace: 'self',
    sessionOnly: true,
    responses: { 200: z.object({ success: z.literal(true), sessions: z.array(sessionView) }) },
  });
  router.get('/api/account/sessions', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const rows = await listSessions(deps.knex, currentUser(ctx).id, currentSessionId(ctx));
    ctx.body = { success: true, sessions: rows.map(({ handle, ...row }) => ({ id: handle, device: describeDevice(row.userAgent), ...row })) };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/account/sessions/:sessionId',
    tag: 'Account',
    summary: 'End one of the account\'s other sessions: it is signed out and its event streams close at once',
    access: 'session',
    workspace: 'self',
    sessionOnly: true,
    responses: {
      200: okBody,
      400: { description: 'The session in use (Sign out ends it)', schema: errorBody },
      404: { description: 'No such session of this account (SESSION_NOT_FOUND)', schema: errorBody },
    },
  });
  router.delete('/api/account/sessions/:sessionId', async (ctx) => {
    const user = currentUser(ctx);
    const sessionId = await sessionIdForHandle(deps.knex, user.id, ctx.params.sessionId);
    if (!sessionId) throw new DomainError(404, ACCOUNT_SECURITY_CODES.sessionNotFound, ACCOUNT_SECURITY_MSG.sessionNotFound);
    if (sessionId === currentSessionId(ctx)) throw new DomainError(400, 'CURRENT_SESSION', ACCOUNT_SECURITY_MSG.currentSession);
    await endSessionById(deps.knex, sessionId);
    ctx.body = { success: true };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/account/sessions/end-others',
    tag: 'Account',
    summary: 'End every session of the account but this one',
    access: 'session',
    workspace: 'self',
    sessionOnly: true,
    body: { contentType: 'application/json', schema: emptyBody, required: false },
    responses: { 200: z.object({ success: z.literal(true), ended: z.number().int() }) },
  });
  router.post('/api/account/sessions/end-others', async (ctx) => {
    parseBody(ctx, emptyBody);
    const ended = await endOtherSessions(deps.knex, currentUser(ctx).id, currentSessionId(ctx));
    ctx.body = { success: true, ended };
  });

  return router;
}
