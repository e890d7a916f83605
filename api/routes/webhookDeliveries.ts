import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from '../../domain/webhooks';
import {
  DELIVERY_PAGE_DEFAULT,
  DELIVERY_PAGE_MAX,
  getDelivery,
  listDeliveries,
  redeliver,
  sendTestEvent,
  WEBHOOK_DELIVERY_CODES,
  type AttemptView,
  type DeliveryView,
} from '../../services/integrations/webhookDeliveries';
import { WorkspaceNotFoundError } from '../../services/workspaces/access';
import type { AppDeps } from '../deps';
import { actionLimited, answers, describeRoute, errorBody, orNull, timestamp } from '../openapi/describe';
import { ActionLimiter } from '../../services/platform/actionLimiter';
import { requireAuth } from '../middleware/auth';
import { parse } from '../validation';
import { workspaceGrant } from '../workspace';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = 'Webhooks';

const endpointParams = z.object({ id: z.string(), endpointId: z.string() });
const deliveryParams = z.object({ id: z.string(), endpointId: z.string(), deliveryId: z.string() });
const listQuery = z.object({
  cursor: z
    .string()
    .regex(/^\d{1,18}$/, { error: 'cursor must be the nextCursor of the previous page' })
    .optional()
    .meta({ description: "the previous page's nextCursor" }),
  limit: z.coerce
    .number({ error: `limit must be a whole number from 1 to ${DELIVERY_PAGE_MAX}` })
    .int({ error: `limit must be a whole number from 1 to ${DELIVERY_PAGE_MAX}` })
    .min(1, { error: `limit must be a whole number from 1 to ${DELIVERY_PAGE_MAX}` })
    .max(DELIVERY_PAGE_MAX, { error: `limit must be a whole number from 1 to ${DELIVERY_PAGE_MAX}` })
    .optional()
    .meta({ description: `deliveries per page (default ${DELIVERY_PAGE_DEFAULT})` }),
});

const body = z.string().nullable().meta({ description: 'cut to the first 4096 bytes' });
const deliveryView = answers<DeliveryView>()(
  z
    .object({
      id: z.string(),
      eventId: z.string().meta({ description: 'the `webhook-id` header: the same on every attempt and on "Send again"' }),
      eventType: z.enum([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE]),
      resourceId: z.string().meta({ description: "what the event is about (a job, an approval ...): one resource's events are delivered in order" }),
      status: z.enum(['pending', 'succeeded', 'failed']),
      attempts: z.number().int(),
      lastStatusCode: z.number().int().nullable(),
      lastError: z.string().nullable(),
      lastLatencyMs: z.number().int().nullable(),
      nextAttemptAt: orNull(timestamp).meta({ description: 'when a pending delivery is tried next (null: as soon as it is its turn)' }),
      createdAt: timestamp,
      deliveredAt: orNull(timestamp),
      requestBody: body,
      responseBody: body,
      redeliveryOf: z
        .object({ id: z.string(), createdAt: timestamp })
        .nullable()
        .meta({ description: 'made by "Send again": the delivery it sends again, and when that one was made; null for the delivery the event itself made' }),
    })
    .meta({ id: 'WebhookDelivery' }),
);
const attemptView = answers<AttemptView>()(
  z
    .object({
      attemptedAt: timestamp,
      statusCode: z.number().int().nullable().meta({ description: 'null: no answer (timeout, refused connection ...), see error' }),
      error: z.string().nullable(),
      latencyMs: z.number().int().nullable(),
      requestBody: body,
      responseBody: body,
    })
    .meta({ id: 'WebhookDeliveryAttempt' }),
);
const deliveryAnswer = z.object({ success: z.literal(true), delivery: deliveryView });
const notFound = {
  description: 'Not a member of the workspace, or no such endpoint or delivery in it (WEBHOOK_ENDPOINT_NOT_FOUND, WEBHOOK_DELIVERY_NOT_FOUND)',
  schema: errorBody,
};
const disabled = { description: `The endpoint is turned off (${WEBHOOK_DELIVERY_CODES.endpointDisabled}): turn it on first`, schema: errorBody };

/** The grant to manage the webhooks of the workspace the path names (admins and owners), before anything is read. */
async function webhooksGrant(ctx: Context, deps: AppDeps) {
  const { id } = parse(endpointParams, ctx.params);
  if (!UUID.test(id)) throw new WorkspaceNotFoundError();
  ctx.query = { ...ctx.query, workspaceId: id.toLowerCase() };
  return workspaceGrant(ctx, deps, 'webhooks');
}

/**
 * /api/workspaces/:id/webhooks/:endpointId/deliveries: an endpoint's delivery log (admins and owners), newest first,
 * with each delivery's attempts; "Send again" (a new delivery of the same event) and "Send test event". Both are
 * sent by the worker's delivery workflow moments later (202); the log shows how they went.
 */
export function webhookDeliveriesRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);
  const limiter = new ActionLimiter(deps.knex, deps.actionLimits);

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/webhooks/:endpointId/deliveries',
    tag: TAG,
    summary: "An endpoint's deliveries, newest first, a page at a time (admins and owners)",
    description: 'Deliveries and their attempts are kept for 30 days.',
    access: 'session',
    workspace: 'webhooks',
    params: endpointParams,
    query: listQuery,
    responses: { 200: z.object({ success: z.literal(true), deliveries: z.array(deliveryView), nextCursor: z.string().nullable() }), 404: notFound },
  });
  router.get('/api/workspaces/:id/webhooks/:endpointId/deliveries', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId } = parse(endpointParams, ctx.params);
    const query = parse(listQuery, ctx.query);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await listDeliveries(deps.knex, { workspaceId: grant.workspaceId, endpointId, cursor: query.cursor, limit: query.limit })) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/webhooks/:endpointId/deliveries/:deliveryId',
    tag: TAG,
    summary: 'One delivery with every attempt, oldest first (admins and owners)',
    access: 'session',
    workspace: 'webhooks',
    params: deliveryParams,
    responses: { 200: z.object({ success: z.literal(true), delivery: deliveryView, attempts: z.array(attemptView) }), 404: notFound },
  });
  router.get('/api/workspaces/:id/webhooks/:endpointId/deliveries/:deliveryId', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId, deliveryId } = parse(deliveryParams, ctx.params);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await getDelivery(deps.knex, { workspaceId: grant.workspaceId, endpointId, deliveryId })) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/webhooks/:endpointId/deliveries/:deliveryId/redeliver',
    tag: TAG,
    summary: '"Send again": a new delivery of the same event to this endpoint (admins and owners)',
    description:
      'The new delivery carries the same `webhook-id`, so a receiver that de-duplicates by it can tell, and `redeliveryOf` names the delivery it sends again. Sent moments later; the answer is the new delivery, pending.',
    access: 'session',
    workspace: 'webhooks',
    params: deliveryParams,
    responses: { 202: deliveryAnswer, 404: notFound, 409: disabled },
  });
  router.post('/api/workspaces/:id/webhooks/:endpointId/deliveries/:deliveryId/redeliver', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId, deliveryId } = parse(deliveryParams, ctx.params);
    ctx.status = 202;
    ctx.body = { success: true, delivery: await redeliver(deps.knex, { workspaceId: grant.workspaceId, endpointId, deliveryId }) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/webhooks/:endpointId/test',
    tag: TAG,
    summary: `"Send test event": a \`${WEBHOOK_TEST_EVENT_TYPE}\` event to this endpoint only, whatever it subscribes to (admins and owners)`,
    access: 'session',
    workspace: 'webhooks',
    params: endpointParams,
    responses: { 202: deliveryAnswer, 404: notFound, 409: disabled, 429: actionLimited },
  });
  router.post('/api/workspaces/:id/webhooks/:endpointId/test', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId } = parse(endpointParams, ctx.params);
    await limiter.take('webhookTest', { workspace: grant.workspaceId });
    ctx.status = 202;
    ctx.body = { success: true, delivery: await sendTestEvent(deps.knex, { workspaceId: grant.workspaceId, endpointId }) };
  });

  return router;
}
