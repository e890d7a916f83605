import Router from '@koa/router';
import { z } from 'zod';
import { ACCOUNT_DATA_MESSAGES } from '../../domain/accountData';
import { AccountDataService } from '../../services/accountData';
import { getTemporalClient } from '../../services/temporalClient';
import { createStorage } from '../../storage';
import { TASK_QUEUES } from '../../workers/taskQueues';
import type { AppDeps } from '../deps';
import { clearSessionCookie, currentUser, requireAuth } from '../middleware/auth';
import { parseBody } from '../validation';

const exportBody = z.strictObject({});

const deleteBody = z.strictObject({
  confirmEmail: z
    .string({ error: (issue) => (issue.input === undefined ? ACCOUNT_DATA_MESSAGES.confirmEmailRequired : 'confirmEmail must be a string') })
    .max(320, { error: ACCOUNT_DATA_MESSAGES.confirmEmailMismatch }),
});

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

  router.post('/api/account/exports', async (ctx) => {
    parseBody(ctx, exportBody);
    ctx.status = 202;
    ctx.body = { success: true, export: await service.requestExport(currentUser(ctx).id) };
  });

  router.get('/api/account/exports', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, export: await service.latestExport(currentUser(ctx).id) };
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
