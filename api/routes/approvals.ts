import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { parseBody, parseQuery } from '../validation';
import { ApprovalService } from '../../services/approvals';
import { contentServicesFor } from '../../services/contentServices';
import { getTemporalClient } from '../../services/temporalClient';

// the specs' calls may carry the user's own id; any other id is refused by assertSelf
const selfQuery = z.object({ userId: z.string().optional() }).strict();
const decisionBody = z.object({
  approvalId: z.string({ error: 'approvalId is required' }).trim().min(1, 'approvalId is required'),
  userId: z.string().optional(),
});

/** /api/approvals/*: the queue, its stats, and approve / reject for the signed-in user. */
export function approvalsRouter(deps: AppDeps): Router {
  const { storage, library } = contentServicesFor(deps);
  const service = new ApprovalService({
    knex: deps.knex,
    storage,
    temporal: () => getTemporalClient(deps.config),
    onProjectChanged: (projectId) => library.invalidate(projectId),
  });
  const router = new Router();
  router.use(requireAuth(deps));

  router.get('/api/approvals/list', async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, data: await service.list(user.id), error: null };
  });

  router.get('/api/approvals/stats', async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, selfQuery).userId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, data: await service.stats(user.id) };
  });

  router.post('/api/approvals/approve', async (ctx) => {
    const body = parseBody(ctx, decisionBody);
    const user = assertSelf(ctx, body.userId);
    ctx.body = await service.approve(user.id, body.approvalId);
  });

  router.post('/api/approvals/reject', async (ctx) => {
    const body = parseBody(ctx, decisionBody);
    const user = assertSelf(ctx, body.userId);
    ctx.body = await service.reject(user.id, body.approvalId);
  });

  return router;
}
