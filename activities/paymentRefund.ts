/**
 * The activity of the payment refund workflow (workflows/paymentRefund.ts): a full refund through Stripe, recorded
 * in stripe_refunds. A refusal Stripe would repeat ends the run (non-retryable); anything else is retried.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { PaymentRefundInput, PaymentRefundResult } from '../domain/workflowContracts/paymentRefund';
import { RefundRefusedError, refundUncreditablePayment } from '../services/billing/paymentRefunds';
import type { ActivityDeps } from './deps';

export function createPaymentRefundActivities(deps: Pick<ActivityDeps, 'knex' | 'config' | 'logger'>) {
  return {
    async refundUncreditablePayment(input: PaymentRefundInput): Promise<PaymentRefundResult> {
      try {
        return await refundUncreditablePayment(deps, input);
      } catch (err) {
        if (err instanceof RefundRefusedError) throw ApplicationFailure.create({ message: err.message, type: 'REFUND_REFUSED', nonRetryable: true, details: [err.code ?? null] });
        throw err;
      }
    },
  };
}
