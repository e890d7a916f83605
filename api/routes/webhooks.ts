import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import {
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
  WEBHOOK_MSG,
  WEBHOOK_URL_MAX_LENGTH,
  type WebhookEndpointView,
  type WebhookTargetRule,
} from '../../domain/webhookEndpoints';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
  type WebhookTargetCheck,
} from '../../services/integrations/webhookEndpoints';
import { webhookTargetPolicy, webhookTargetRule } from '../../services/integrations/webhookTargets';
import { WorkspaceNotFoundError } from '../../services/workspaces/access';
import type { AppDeps } from '../deps';
import { answers, describeRoute, errorBody, orNull, timestamp } from '../openapi/describe';
import { currentUser, requireAuth } from '../middleware/auth';
import { parse, parseBody, singleLine } from '../validation';
import { workspaceGrant } from '../workspace';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = 'Webhooks';

const workspaceParams = z.object({ id: z.string() });
const endpointParams = z.object({ id: z.string(), endpointId: z.string() });

const urlField = singleLine(z.string({ error: (issue) => (issue.input === undefined ? WEBHOOK_MSG.urlRequired : 'url must be a string') }).trim(), 'URL')
  .min(1, { error: WEBHOOK_MSG.urlRequired })
  .max(WEBHOOK_URL_MAX_LENGTH, { error: WEBHOOK_MSG.urlTooLong })
  .meta({ description: 'https:// (http:// only to localhost outside production); must resolve to public addresses', example: 'https://example.com/webhooks' });
const descriptionField = singleLine(z.string({ error: 'description must be a string' }).trim(), 'Description').max(WEBHOOK_DESCRIPTION_MAX_LENGTH, {
  error: WEBHOOK_MSG.descriptionTooLong,
});
const eventTypesField = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: (issue) => WEBHOOK_MSG.unknownEventType(issue.input, WEBHOOK_EVENT_TYPES) }), {
    error: (issue) => (issue.input === undefined ? WEBHOOK_MSG.eventTypesRequired : WEBHOOK_MSG.eventTypesNotList),
  })
  .min(1, { error: WEBHOOK_MSG.eventTypesRequired })
  .max(WEBHOOK_EVENT_TYPES.length * 2, { error: WEBHOOK_MSG.eventTypesNotList });

const createBody = z.object({ url: urlField, description: descriptionField.optional(), eventTypes: eventTypesField });

const updateBody = z
  .object({
    url: urlField.optional(),
    description: descriptionField.optional(),
    eventTypes: eventTypesField.optional(),
    enabled: z.boolean({ error: WEBHOOK_MSG.enabledNotBoolean }).optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { error: WEBHOOK_MSG.nothingToChange });

const endpointView = answers<WebhookEndpointView>()(
  z
    .object({
      id: z.string(),
      url: z.string(),
      description: z.string(),
      eventTypes: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
      status: z.enum(['enabled', 'disabled']),
      disabledReason: z.string().nullable(),
      disabledAt: orNull(timestamp),
      consecutiveFailures: z.number().int(),
      secretPrefix: z.string().meta({ description: 'the first 10 characters of the signing secret' }),
      previousSecretExpiresAt: orNull(timestamp).meta({ description: 'after a rotation: until when the previous secret still signs (a second signature)' }),
      createdAt: timestamp,
      updatedAt: timestamp,
      createdBy: z.object({ name: z.string(), email: z.string() }).nullable(),
    })
    .meta({ id: 'WebhookEndpoint' }),
);
const targetRule = answers<WebhookTargetRule>()(
  z
    .object({
      loopback: z.boolean().meta({ description: 'http:// (and https://) to localhost, 127.0.0.1 or [::1] is accepted: NODE_ENV is not production' }),
      privateAddresses: z.boolean().meta({ description: 'private, loopback and link-local addresses are accepted (WEBHOOK_ALLOW_PRIVATE_TARGETS=on)' }),
    })
    .meta({ id: 'WebhookTargetRule', description: 'Which URLs this server sends webhooks to, besides https:// to public addresses' }),
);
const endpointAnswer = z.object({ success: z.literal(true), endpoint: endpointView });
const secret = z.string().meta({ description: 'the signing secret (`whsec_` + base64), shown this once', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
const notFound = { description: 'Not a member of the workspace, or no such endpoint in it (WEBHOOK_ENDPOINT_NOT_FOUND)', schema: errorBody };
const refusedUrl = {
  description:
    'Invalid body, or a URL the target rules refuse: WEBHOOK_URL_INVALID, WEBHOOK_URL_NOT_HTTPS, WEBHOOK_URL_CREDENTIALS, WEBHOOK_TARGET_PRIVATE (a private, loopback or link-local address, after DNS), WEBHOOK_TARGET_UNRESOLVABLE',
  schema: errorBody,
};

/** The `:id` of a workspace route: anything that is not a workspace id is a workspace that does not exist (404). */
function workspaceIdOf(ctx: Context): string {
  const { id } = parse(workspaceParams, ctx.params);
  if (!UUID.test(id)) throw new WorkspaceNotFoundError();
  return id.toLowerCase();
}

/** The grant to manage the webhooks of the workspace the path names (admins and owners), before anything is read. */
async function webhooksGrant(ctx: Context, deps: AppDeps) {
  const workspaceId = workspaceIdOf(ctx);
  ctx.query = { ...ctx.query, workspaceId };
  return workspaceGrant(ctx, deps, 'webhooks');
}

/**
 * /api/workspaces/:id/webhooks: a workspace's webhook endpoints (admins and owners): register one (its signing secret
 * answered once), list, read, change, turn off and on, delete, rotate the secret. The delivery log and "Send again"
 * / "Send test event" are api/routes/webhookDeliveries.ts.
 */
export function webhooksRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);
  const check = (): WebhookTargetCheck => ({ policy: webhookTargetPolicy(deps.config), resolve: deps.webhookResolver });

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/webhooks',
    tag: TAG,
    summary: "The workspace's webhook endpoints, oldest first (admins and owners)",
    access: 'session',
    workspace: 'webhooks',
    params: workspaceParams,
    responses: { 200: z.object({ success: z.literal(true), endpoints: z.array(endpointView), targetRule }), 404: notFound },
  });
  router.get('/api/workspaces/:id/webhooks', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, endpoints: await listEndpoints(deps.knex, grant.workspaceId), targetRule: webhookTargetRule(webhookTargetPolicy(deps.config)) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/webhooks',
    tag: TAG,
    summary: 'Register a webhook endpoint (admins and owners): its signing secret is answered this once',
    description:
      'The URL must be https:// (plain http:// only to localhost, 127.0.0.1 or [::1] when NODE_ENV is not production) and every address its host resolves to public, unless WEBHOOK_ALLOW_PRIVATE_TARGETS=on. At most 20 endpoints per workspace (409 WEBHOOK_ENDPOINT_LIMIT).',
    access: 'session',
    workspace: 'webhooks',
    params: workspaceParams,
    body: createBody,
    responses: {
      201: z.object({ success: z.literal(true), endpoint: endpointView, secret }),
      400: refusedUrl,
      404: notFound,
      409: { description: 'The workspace has 20 endpoints already (WEBHOOK_ENDPOINT_LIMIT)', schema: errorBody },
    },
  });
  router.post('/api/workspaces/:id/webhooks', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const body = parseBody(ctx, createBody);
    const created = await createEndpoint(
      deps.knex,
      { workspaceId: grant.workspaceId, actorId: currentUser(ctx).id, url: body.url, description: body.description ?? '', eventTypes: body.eventTypes },
      check(),
    );
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = { success: true, endpoint: created.endpoint, secret: created.secret };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/webhooks/:endpointId',
    tag: TAG,
    summary: 'One webhook endpoint (admins and owners)',
    access: 'session',
    workspace: 'webhooks',
    params: endpointParams,
    responses: { 200: endpointAnswer, 404: notFound },
  });
  router.get('/api/workspaces/:id/webhooks/:endpointId', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId } = parse(endpointParams, ctx.params);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, endpoint: await getEndpoint(deps.knex, grant.workspaceId, endpointId) };
  });

  describeRoute(router, {
    method: 'patch',
    path: '/api/workspaces/:id/webhooks/:endpointId',
    tag: TAG,
    summary: 'Change a webhook endpoint: URL, description, event types, or turn it off and on (admins and owners)',
    description:
      '`enabled: true` turns on an endpoint that was turned off (by an admin, or by delivery after a 410 or too many failures), resets its failure count and sends what waited; `enabled: false` turns it off (its deliveries wait).',
    access: 'session',
    workspace: 'webhooks',
    params: endpointParams,
    body: updateBody,
    responses: { 200: endpointAnswer, 400: refusedUrl, 404: notFound },
  });
  router.patch('/api/workspaces/:id/webhooks/:endpointId', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId } = parse(endpointParams, ctx.params);
    const changes = parseBody(ctx, updateBody);
    ctx.body = { success: true, endpoint: await updateEndpoint(deps.knex, { workspaceId: grant.workspaceId, endpointId, changes }, check()) };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/workspaces/:id/webhooks/:endpointId',
    tag: TAG,
    summary: 'Delete a webhook endpoint and its delivery log (admins and owners)',
    access: 'session',
    workspace: 'webhooks',
    params: endpointParams,
    responses: { 204: { description: 'Deleted' }, 404: notFound },
  });
  router.delete('/api/workspaces/:id/webhooks/:endpointId', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId } = parse(endpointParams, ctx.params);
    await deleteEndpoint(deps.knex, { workspaceId: grant.workspaceId, endpointId });
    ctx.status = 204;
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/workspaces/:id/webhooks/:endpointId/rotate-secret',
    tag: TAG,
    summary: 'Rotate the signing secret (admins and owners): the new one is answered this once',
    description:
      'For 24 hours the previous secret keeps signing too: `webhook-signature` carries both signatures, so a receiver verifying with either accepts. Rotating again within them ends the older secret at once.',
    access: 'session',
    workspace: 'webhooks',
    params: endpointParams,
    responses: {
      200: z.object({ success: z.literal(true), secret, previousSecretExpiresAt: timestamp, endpoint: endpointView }),
      404: notFound,
    },
  });
  router.post('/api/workspaces/:id/webhooks/:endpointId/rotate-secret', auth, async (ctx) => {
    const grant = await webhooksGrant(ctx, deps);
    const { endpointId } = parse(endpointParams, ctx.params);
    const rotated = await rotateEndpointSecret(deps.knex, { workspaceId: grant.workspaceId, endpointId });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...rotated };
  });

  return router;
}
