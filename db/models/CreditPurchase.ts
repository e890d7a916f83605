import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

export const CREDIT_PURCHASE_STATUSES = ['open', 'completed', 'expired'] as const;
export type CreditPurchaseStatus = (typeof CREDIT_PURCHASE_STATUSES)[number];

/** A Stripe Checkout purchase of a credit package; completed once its webhook has been applied. */
export class CreditPurchase extends BaseModel {
  static override tableName = 'credit_purchases';

  id!: string;
  userId!: string;
  packageId!: string;
  credits!: number;
  amountCents!: number;
  currency!: string;
  stripeSessionId!: string | null;
  status!: CreditPurchaseStatus;
  createdAt!: Date;
  completedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['userId', 'packageId', 'credits', 'amountCents'],
    properties: {
      id: schema.uuid,
      userId: schema.uuid,
      packageId: schema.nonBlank,
      credits: { type: 'integer', minimum: 1 },
      amountCents: schema.nonNegativeInt,
      currency: { type: 'string', minLength: 3, maxLength: 3 },
      stripeSessionId: schema.nullableText,
      status: { type: 'string', enum: [...CREDIT_PURCHASE_STATUSES] },
    },
  };
}
