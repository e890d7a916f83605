/**
 * The refund of a payment nothing could be credited for (id `payment-refund-<Checkout Session id>`): a Checkout
 * Session completed for an account that was deleted, or is being deleted. Shared by the workflow, its activity and
 * the webhook that starts it, so none of them imports another's module.
 */

export type UncreditableReason = 'account_deleted' | 'account_being_deleted';

export interface PaymentRefundInput {
  sessionId: string;
  paymentIntentId: string;
  amountCents: number;
  currency: string;
  /** The account the payment was for, from the session's metadata; it may be gone. */
  userId: string | null;
  packageId: string | null;
  reason: UncreditableReason;
  /** The Stripe event that reported the payment. */
  eventId: string;
}

export interface PaymentRefundResult {
  status: 'refunded' | 'failed';
  refundId: string | null;
  amountCents: number;
}

export function paymentRefundWorkflowId(sessionId: string): string {
  return `payment-refund-${sessionId}`;
}
