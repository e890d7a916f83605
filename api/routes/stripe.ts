import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { rawBody, rawBodyOf } from '../middleware/rawBody';
import { parse, parseBody, parseQuery } from '../validation';
import {
  BILLING_MSG,
  CHECKOUT_STATES,
  PURCHASE_STATUSES,
  PURCHASING_MODES,
  type CheckoutProgress,
  type PurchaseStatusReply,
  type PurchaseView,
  type PurchasingReply,
} from '../../domain/billing';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { createCheckoutSession, getPurchaseStatus, handleStripeWebhook, listPurchases, purchasingOf, type BillingDeps } from '../../services/billing/billing';
import { startPaymentRefund } from '../../services/billing/paymentRefunds';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { TASK_QUEUES } from '../../domain/taskQueues';
import { workspaceGrant } from '../workspace';

/** Stripe posts here with a signature over the exact bytes: the app's JSON parser leaves this path alone. */
export const STRIPE_WEBHOOK_PATH = '/api/stripe/webhook';
const WEBHOOK_MAX_BYTES = 1024 * 1024;

const returnUrl = z.string().trim().min(1).max(2048);

/**
 * The spec's payload (priceId, userId, email, credits, packageId, successUrl, cancelUrl). Only packageId decides
 * what is sold: priceId and credits are accepted and ignored, userId must be the session's user, email is the
 * session's e-mail.
 */
const checkoutBody = z
  .object({
    packageId: z.string({ error: BILLING_MSG.unknownPackage }).min(1, BILLING_MSG.unknownPackage).max(100),
    priceId: z.string().max(200).nullish(),
    userId: z.string().max(100).nullish(),
    email: z.string().max(254).nullish(),
    credits: z.number().nullish(),
    successUrl: returnUrl.optional(),
    cancelUrl: returnUrl.optional(),
  })
  .strict();

const sessionIdParam = z.string().regex(/^cs_[A-Za-z0-9_]{1,250}$/, { message: 'Invalid checkout session id' });
const noQuery = z.object({ userId: z.string().optional() }).strict();
const purchaseParams = z.object({ sessionId: z.string() });
const webhookHeaders = z.object({ 'stripe-signature': z.string().optional().meta({ description: "Stripe's signature over the exact body" }) });

const purchaseView = answers<PurchaseView>()(
  z.object({
    id: z.string(),
    sessionId: z.string().nullable(),
    packageId: z.string(),
    packageName: z.string(),
    credits: z.number().int(),
    amountCents: z.number().int(),
    currency: z.string(),
    status: z.enum(PURCHASE_STATUSES),
    createdAt: z.string(),
    completedAt: z.string().nullable(),
    creditsReversed: z.number().int(),
  }),
);
const checkoutProgress = answers<CheckoutProgress>()(
  z.object({
    state: z.enum(CHECKOUT_STATES).meta({
      description:
        'awaiting_payment (Stripe: session open), processing (complete, payment unpaid: a delayed method), confirming (paid, not credited yet), credited, failed (the delayed payment failed), expired',
    }),
    sessionStatus: z.string().nullable(),
    paymentStatus: z.string().nullable(),
  }),
);
const purchaseStatus = answers<PurchaseStatusReply>()(
  z.object({ purchase: purchaseView, checkout: checkoutProgress, availableCredits: z.number().int(), credits: z.number().int() }),
);
const webhookOutcomes = [
  'credited',
  'already_credited',
  'awaiting_payment',
  'payment_failed',
  'expired',
  'refunded',
  'refund_already_applied',
  'refund_scheduled',
  'refund_already_scheduled',
  'unknown_session',
  'unknown_payment',
  'duplicate_event',
  'ignored',
] as const;
const purchasingReply = answers<PurchasingReply>()(
  z.object({
    mode: z.enum(PURCHASING_MODES).meta({
      description:
        'live: Stripe takes real payments; test: a Stripe test key or the local test-mode checkout of `npm start` (no real payment); unavailable: Stripe is not configured, so buying is refused (503) and the Buy buttons say so',
    }),
  }),
);
const stripeUnavailable = { description: 'Stripe is not configured (STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET unset) or the database is unavailable', schema: errorBody };

const billingOnly = { description: "Only the workspace's owners and admins buy credits and read its purchases (WORKSPACE_FORBIDDEN); nothing is created", schema: errorBody };

/**
 * /api/stripe/*: checkout, the webhook (public; its signature is the credential) and the workspace's purchases.
 * Buying credits for a workspace and reading what it paid are 'billing' (owners and admins, DESIGN.md "Teams
 * (workspaces)"): the session is created for the request's workspace, which the webhook credits. Whether buying
 * is possible here at all is configuration, not a workspace's data ('self').
 */
export function stripeRouter(deps: Pick<AppDeps, 'knex' | 'config' | 'logger' | 'taskQueues' | 'projectOwners'>): Router {
  const router = new Router();
  const refundQueue = deps.taskQueues?.accountData ?? TASK_QUEUES.accountData;
  const billing: BillingDeps = {
    knex: deps.knex,
    config: deps.config,
    logger: deps.logger,
    // a payment for a deleted account goes back through a durable workflow (account-data queue, beside deletions)
    startRefund: async (input) => startPaymentRefund(await getTemporalClient(deps.config), refundQueue, input),
  };

  describeRoute(router, {
    method: 'get',
    path: '/api/stripe/purchasing',
    tag: 'Billing',
    summary: 'Whether credits can be bought here, and whether payments are real (live) or test payments',
    access: 'session',
    workspace: 'self',
    responses: { 200: z.object({ success: z.literal(true), data: purchasingReply }) },
  });
  router.get('/api/stripe/purchasing', requireAuth(deps), (ctx) => {
    ctx.body = { success: true, data: { mode: purchasingOf(deps.config) } };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/stripe/create-checkout-session',
    tag: 'Billing',
    summary: "A Stripe Checkout Session for a credit package for the workspace's balance (the package id alone decides credits and price)",
    description:
      "The session's metadata carries `workspaceId` (the account credited) and `userId` (the buyer); only owners and admins of the workspace may buy.",
    access: 'session',
    workspace: 'billing',
    body: checkoutBody,
    responses: {
      200: z.object({ success: z.literal(true), url: z.string(), sessionId: z.string() }),
      403: billingOnly,
      502: { description: 'Failed to create checkout session (Stripe refused or did not answer)', schema: errorBody },
      503: {
        description:
          "Stripe is not configured, the database is unavailable, or the package's configured Stripe Price does not charge its displayed amount once in NZD (PACKAGE_PRICE_MISMATCH)",
        schema: errorBody,
      },
    },
  });
  router.post(
    '/api/stripe/create-checkout-session',
    requireAuth(deps, { unauthenticatedMessage: BILLING_MSG.signInToPurchase }),
    async (ctx) => {
      const body = parseBody(ctx, checkoutBody);
      const user = assertSelf(ctx, body.userId);
      const grant = await workspaceGrant(ctx, deps, 'billing');
      const { url, sessionId } = await createCheckoutSession(billing, {
        user: { id: user.id, email: user.email },
        workspaceId: grant.workspaceId,
        packageId: body.packageId,
        successUrl: body.successUrl,
        cancelUrl: body.cancelUrl,
      });
      ctx.body = { success: true, url, sessionId };
    },
  );

  describeRoute(router, {
    method: 'post',
    path: STRIPE_WEBHOOK_PATH,
    tag: 'Billing',
    summary: "Stripe's events (checkout completed, async payment, refunds), verified by signature and applied once",
    description:
      'Called by Stripe. A request without a valid `Stripe-Signature` over the exact body is refused with 400. A payment completed for an account that was deleted (or is being deleted) is recorded and refunded in full by a durable workflow (`refund_scheduled`).',
    access: 'signature',
    headers: webhookHeaders,
    body: { contentType: 'application/json', schema: z.looseObject({}), description: 'A Stripe event, read as raw bytes' },
    responses: {
      200: z.object({ received: z.literal(true), outcome: z.enum(webhookOutcomes) }),
      400: { description: 'Invalid Stripe signature, or no signature', schema: errorBody },
      503: { description: 'Stripe is not configured, the database is unavailable, or the refund of an uncreditable payment could not be started (Stripe retries)', schema: errorBody },
    },
  });
  router.post(STRIPE_WEBHOOK_PATH, rawBody({ limitBytes: WEBHOOK_MAX_BYTES }), async (ctx) => {
    const result = await handleStripeWebhook(billing, rawBodyOf(ctx), ctx.get('stripe-signature') || undefined);
    ctx.body = { received: true, outcome: result.outcome };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/stripe/purchases',
    tag: 'Billing',
    summary: "The workspace's purchases, newest first",
    access: 'session',
    workspace: 'billing',
    query: noQuery,
    responses: { 200: z.object({ success: z.literal(true), data: z.array(purchaseView) }), 403: billingOnly },
  });
  router.get('/api/stripe/purchases', requireAuth(deps), async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, noQuery).userId);
    const grant = await workspaceGrant(ctx, deps, 'billing');
    ctx.body = { success: true, data: await listPurchases(deps.knex, grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/stripe/purchases/:sessionId',
    tag: 'Billing',
    summary: "One purchase by its Checkout Session id: where its checkout stands (our records and Stripe's session) and the balance (the return page)",
    access: 'session',
    workspace: 'billing',
    params: purchaseParams,
    query: noQuery,
    responses: { 200: z.object({ success: z.literal(true), data: purchaseStatus }), 403: billingOnly },
  });
  router.get('/api/stripe/purchases/:sessionId', requireAuth(deps), async (ctx) => {
    assertSelf(ctx, parseQuery(ctx, noQuery).userId);
    const grant = await workspaceGrant(ctx, deps, 'billing');
    const sessionId = sessionIdParam.safeParse(parse(purchaseParams, ctx.params).sessionId);
    // a malformed id cannot be anyone's session: the same 404 as another workspace's
    const data = sessionId.success ? await getPurchaseStatus(billing, grant.workspaceId, sessionId.data) : null;
    if (!data) ctx.throw(404, BILLING_MSG.purchaseNotFound);
    ctx.body = { success: true, data };
  });

  return router;
}
