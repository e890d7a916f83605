/**
 * Refunds in full a payment that could not be credited (id `payment-refund-<session id>`, so a webhook delivered
 * twice joins the same run). One activity records the refund and asks Stripe for it under an Idempotency-Key made
 * of the session id; it retries until Stripe answers (a refusal Stripe will repeat is recorded as failed and ends
 * the run without retries).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { PaymentRefundInput, PaymentRefundResult } from '../domain/workflowContracts/paymentRefund';
export * from '../domain/workflowContracts/paymentRefund';

type Activities = ReturnType<typeof createActivities>;

// money taken must go back: no attempt limit, the backoff caps at ten minutes
const refunds = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

export async function paymentRefundWorkflow(input: PaymentRefundInput): Promise<PaymentRefundResult> {
  return refunds.refundUncreditablePayment(input);
}
