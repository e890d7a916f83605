import type { JSONSchema } from 'objection';
import { PURCHASE_STATUSES, type PurchaseStatus } from '../../domain/billing';
import { BaseModel, schema } from './BaseModel';

export const CREDIT_PURCHASE_STATUSES = PURCHASE_STATUSES;
export type CreditPurchaseStatus = PurchaseStatus;

/**
 * A Stripe Checkout purchase of a credit package: open when the session is created, completed once its webhook
 * credited the package, refunded (or partially) when Stripe reports a refund. Written only by services/billing/billing.ts.
 */
export class CreditPurchase extends BaseModel {
  static override tableName = 'credit_purchases';
  static override jsonAttributes = ['metadata'];
  static override touchesUpdatedAt = true;

  id!: string;
  workspaceId!: string;
  packageId!: string;
  credits!: number;
  amountCents!: number;
  currency!: string;
  stripeSessionId!: string | null;
  stripePriceId!: string | null;
  paymentIntentId!: string | null;
  status!: CreditPurchaseStatus;
  refundedAmountCents!: number;
  creditsClaimedBack!: number;
  creditsReversed!: number;
  metadata!: Record<string, unknown>;
  createdAt!: Date;
  completedAt!: Date | null;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'packageId', 'credits', 'amountCents'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      packageId: schema.nonBlank,
      credits: { type: 'integer', minimum: 1 },
      amountCents: schema.nonNegativeInt,
      currency: { type: 'string', minLength: 3, maxLength: 3 },
      stripeSessionId: schema.nullableText,
      stripePriceId: schema.nullableText,
      paymentIntentId: schema.nullableText,
      status: { type: 'string', enum: [...CREDIT_PURCHASE_STATUSES] },
      refundedAmountCents: schema.nonNegativeInt,
      creditsClaimedBack: schema.nonNegativeInt,
      creditsReversed: schema.nonNegativeInt,
      metadata: schema.jsonObject,
    },
  };
}
