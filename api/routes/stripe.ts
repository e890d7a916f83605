import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { rawBody, rawBodyOf } from '../middleware/rawBody';
import { parseBody, parseQuery } from '../validation';
import { BILLING_MSG } from '../../domain/billing';
import { createCheckoutSession, getPurchaseStatus, handleStripeWebhook, listPurchases } from '../../services/billing';

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

/** /api/stripe/*: checkout, the webhook (public; its signature is the credential) and the user's purchases. */
export function stripeRouter(deps: Pick<AppDeps, 'knex' | 'config' | 'logger'>): Router {
  const router = new Router();
  const billing = { knex: deps.knex, config: deps.config, logger: deps.logger };

  router.post(
    '/api/stripe/create-checkout-session',
    requireAuth(deps, { unauthenticatedMessage: BILLING_MSG.signInToPurchase }),
    async (ctx) => {
      const body = parseBody(ctx, checkoutBody);
      const user = assertSelf(ctx, body.userId);
      const { url, sessionId } = await createCheckoutSession(billing, {
        user: { id: user.id, email: user.email },
        packageId: body.packageId,
        successUrl: body.successUrl,
        cancelUrl: body.cancelUrl,
      });
      ctx.body = { success: true, url, sessionId };
    },
  );

  router.post(STRIPE_WEBHOOK_PATH, rawBody({ limitBytes: WEBHOOK_MAX_BYTES }), async (ctx) => {
    const result = await handleStripeWebhook(billing, rawBodyOf(ctx), ctx.get('stripe-signature') || undefined);
    ctx.body = { received: true, outcome: result.outcome };
  });

  router.get('/api/stripe/purchases', requireAuth(deps), async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, noQuery).userId);
    ctx.body = { success: true, data: await listPurchases(deps.knex, user.id) };
  });

  router.get('/api/stripe/purchases/:sessionId', requireAuth(deps), async (ctx) => {
    const user = assertSelf(ctx, parseQuery(ctx, noQuery).userId);
    const sessionId = sessionIdParam.safeParse(ctx.params.sessionId);
    // a malformed id cannot be anyone's session: the same 404 as another user's
    const data = sessionId.success ? await getPurchaseStatus(deps.knex, user.id, sessionId.data) : null;
    if (!data) ctx.throw(404, BILLING_MSG.purchaseNotFound);
    ctx.body = { success: true, data };
  });

  return router;
}
