import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

export const STRIPE_REFUND_STATUSES = ['pending', 'refunded', 'failed'] as const;
export const STRIPE_REFUND_REASONS = ['account_deleted', 'account_being_deleted'] as const;

/**
 * A payment the app refunds in full because nothing could be credited (the account was deleted, or was being
 * deleted, when its Checkout Session completed): one row per session, kept after the account is gone. Written by
 * services/billing/paymentRefunds.ts and the payment-refund workflow's activity.
 */
export class StripeRefund extends BaseModel {
  static override tableName = 'stripe_refunds';
  static override touchesUpdatedAt = true;

  id!: string;
  stripeSessionId!: string;
  paymentIntentId!: string;
  workspaceId!: string | null;
  packageId!: string | null;
  amountCents!: number;
  currency!: string;
  reason!: (typeof STRIPE_REFUND_REASONS)[number];
  status!: (typeof STRIPE_REFUND_STATUSES)[number];
  stripeRefundId!: string | null;
  stripeEventId!: string | null;
  attempts!: number;
  lastError!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
  refundedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['stripeSessionId', 'paymentIntentId', 'amountCents', 'currency', 'reason'],
    properties: {
      id: schema.uuid,
      stripeSessionId: schema.nonBlank,
      paymentIntentId: schema.nonBlank,
      workspaceId: schema.nullableText,
      packageId: schema.nullableText,
      amountCents: schema.nonNegativeInt,
      currency: schema.nonBlank,
      reason: { type: 'string', enum: [...STRIPE_REFUND_REASONS] },
      status: { type: 'string', enum: [...STRIPE_REFUND_STATUSES] },
      stripeRefundId: schema.nullableText,
      stripeEventId: schema.nullableText,
      attempts: schema.nonNegativeInt,
      lastError: schema.nullableText,
    },
  };
}
