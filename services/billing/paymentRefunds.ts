/**
 * Refunds of payments nothing could be credited for (a Checkout Session completed for an account that was deleted,
 * or is being deleted). The webhook records the payment in stripe_refunds (no foreign key: the record outlives the
 * account) and starts `payment-refund-<session id>` in the same database transaction; the workflow's activity asks
 * Stripe for a full refund under an Idempotency-Key made of the session id and records the answer. Each step is
 * safe to repeat: the row is inserted once per session, a refunded row is never refunded again, and Stripe answers a
 * repeated key with its first answer.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import Stripe from 'stripe';
import type { AppConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import { paymentRefundWorkflowId, type PaymentRefundInput, type PaymentRefundResult } from '../../domain/workflowContracts/paymentRefund';
import { jobSearchAttributes } from '../../domain/searchAttributes';
import { StripeRefund } from '../../db/models/StripeRefund';
import { stripeClient } from './stripeClient';

export const STRIPE_REFUNDS_TABLE = 'stripe_refunds';

/** The workflow's signature (workflows/paymentRefund.ts), started by its type name: services do not import workflows. */
type PaymentRefundWorkflow = (input: PaymentRefundInput) => Promise<PaymentRefundResult>;

/** Records the payment to refund, once per Checkout Session; true when this call wrote the row. */
export async function recordUncreditablePayment(db: Knex | Knex.Transaction, input: PaymentRefundInput): Promise<boolean> {
  const inserted = await db(STRIPE_REFUNDS_TABLE)
    .insert({
      stripe_session_id: input.sessionId,
      payment_intent_id: input.paymentIntentId,
      workspace_id: input.userId,
      package_id: input.packageId,
      amount_cents: input.amountCents,
      currency: input.currency,
      reason: input.reason,
      stripe_event_id: input.eventId,
    })
    .onConflict('stripe_session_id')
    .ignore()
    .returning('id');
  return inserted.length > 0;
}

/** Starts the refund's workflow, or joins the run of the same session (a second delivery, another event of it). */
export async function startPaymentRefund(client: Client, taskQueue: string, input: PaymentRefundInput): Promise<void> {
  try {
    await client.workflow.start<PaymentRefundWorkflow>('paymentRefundWorkflow', {
      workflowId: paymentRefundWorkflowId(input.sessionId),
      taskQueue,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      // a closed run of this session is not run again: its row says what became of the refund
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: jobSearchAttributes({ workspaceId: input.userId ?? 'unknown', kind: 'payment-refund', itemId: input.sessionId }),
      args: [input],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** Stripe refused the refund for good (a repeat would be refused again): recorded as failed, not retried. */
export class RefundRefusedError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'RefundRefusedError';
  }
}

export function refundIdempotencyKey(sessionId: string): string {
  return `payment-refund:${sessionId}`;
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 500);
}

/** A refusal Stripe will repeat: a bad request (not a rate limit, not an idempotency clash of a concurrent retry). */
function refusedForGood(err: unknown): err is Stripe.errors.StripeInvalidRequestError {
  return err instanceof Stripe.errors.StripeInvalidRequestError && err.statusCode !== 429 && err.statusCode !== 409;
}

export interface RefundDeps {
  knex: Knex;
  config: Pick<AppConfig, 'stripeSecretKey' | 'stripeApiBase'>;
  logger: Logger;
}

/**
 * Refunds the payment in full through Stripe's refund API and records it. Safe to run again: a refunded row answers
 * at once, and the Idempotency-Key makes Stripe answer a repeated request with the same Refund. Throws to be retried
 * when Stripe cannot be reached; throws RefundRefusedError (row failed) when Stripe refuses the refund.
 */
export async function refundUncreditablePayment(deps: RefundDeps, input: PaymentRefundInput): Promise<PaymentRefundResult> {
  // the webhook's transaction may not have committed (it failed after starting this run): the row is written here too
  await recordUncreditablePayment(deps.knex, input);
  const row = await StripeRefund.query(deps.knex).findOne({ stripe_session_id: input.sessionId }).throwIfNotFound();
  if (row.status === 'refunded') return { status: 'refunded', refundId: row.stripeRefundId, amountCents: row.amountCents };
  const stripe = stripeClient(deps.config);
  if (!stripe) {
    await noteAttempt(deps.knex, input.sessionId, 'Stripe is not configured on this worker (STRIPE_SECRET_KEY unset)');
    throw new Error('Stripe is not configured on this worker: the refund waits for STRIPE_SECRET_KEY');
  }
  let refund: Stripe.Refund;
  try {
    refund = await stripe.refunds.create(
      {
        payment_intent: row.paymentIntentId,
        reason: 'requested_by_customer',
        metadata: { stripeSessionId: input.sessionId, userId: input.userId ?? '', reason: input.reason },
      },
      { idempotencyKey: refundIdempotencyKey(input.sessionId) },
    );
  } catch (err) {
    if (refusedForGood(err)) {
      await deps.knex(STRIPE_REFUNDS_TABLE)
        .where({ stripe_session_id: input.sessionId, status: 'pending' })
        .update({ status: 'failed', attempts: deps.knex.raw('attempts + 1'), last_error: errorText(err), updated_at: deps.knex.fn.now() });
      deps.logger.error({ err, sessionId: input.sessionId, paymentIntentId: row.paymentIntentId }, 'stripe refused the refund of an uncreditable payment: refund it by hand');
      throw new RefundRefusedError(errorText(err), err.code);
    }
    await noteAttempt(deps.knex, input.sessionId, errorText(err));
    throw err;
  }
  await deps.knex(STRIPE_REFUNDS_TABLE)
    .where({ stripe_session_id: input.sessionId })
    .update({
      status: 'refunded',
      stripe_refund_id: refund.id,
      amount_cents: refund.amount,
      attempts: deps.knex.raw('attempts + 1'),
      last_error: null,
      refunded_at: deps.knex.fn.now(),
      updated_at: deps.knex.fn.now(),
    });
  deps.logger.info({ sessionId: input.sessionId, refundId: refund.id, amountCents: refund.amount, reason: input.reason }, 'uncreditable payment refunded');
  return { status: 'refunded', refundId: refund.id, amountCents: refund.amount };
}

async function noteAttempt(knex: Knex, sessionId: string, error: string): Promise<void> {
  await knex(STRIPE_REFUNDS_TABLE)
    .where({ stripe_session_id: sessionId, status: 'pending' })
    .update({ attempts: knex.raw('attempts + 1'), last_error: error, updated_at: knex.fn.now() });
}
