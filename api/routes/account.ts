import Router from '@koa/router';
import { z } from 'zod';
import { ACCOUNT_DATA_MESSAGES, type AccountDeletionAnswer, type DataExportView } from '../../domain/accountData';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { AccountDataService } from '../../services/accounts/accountData';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { createStorage } from '../../storage';
import { TASK_QUEUES } from '../../domain/taskQueues';
import type { AppDeps } from '../deps';
import { clearSessionCookie, currentUser, requireAuth } from '../middleware/auth';
import { parseBody } from '../validation';

const exportBody = z.strictObject({});

const deleteBody = z.strictObject({
  confirmEmail: z
    .string({ error: (issue) => (issue.input === undefined ? ACCOUNT_DATA_MESSAGES.confirmEmailRequired : 'confirmEmail must be a string') })
    .max(320, { error: ACCOUNT_DATA_MESSAGES.confirmEmailMismatch }),
});

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

  return router;
}
