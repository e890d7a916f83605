import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

export const CREDIT_TRANSACTION_TYPES = ['signup_bonus', 'purchase', 'add', 'deduct', 'consume', 'admin_adjust', 'refund'] as const;
export type CreditTransactionType = (typeof CREDIT_TRANSACTION_TYPES)[number];

/**
 * One row of the append-only credit ledger: a signed change to profiles.credits and the balance it left.
 * Written only by services/billing/credits.ts, inside the transaction that locks the profile row.
 */
export class CreditTransaction extends BaseModel {
  static override tableName = 'credit_transactions';
  static override jsonAttributes = ['metadata'];

  id!: string;
  workspaceId!: string;
  amount!: number;
  balanceAfter!: number;
  transactionType!: CreditTransactionType;
  description!: string;
  referenceId!: string | null;
  metadata!: Record<string, unknown>;
  idempotencyKey!: string;
  createdBy!: string | null;
  createdByEmail!: string;
  createdAt!: Date;

  static override get jsonSchema(): JSONSchema {
    return {
      type: 'object',
      required: ['workspaceId', 'amount', 'balanceAfter', 'transactionType', 'idempotencyKey'],
      properties: {
        workspaceId: schema.uuid,
        amount: { type: 'integer' },
        balanceAfter: schema.nonNegativeInt,
        transactionType: { type: 'string', enum: [...CREDIT_TRANSACTION_TYPES] },
        description: schema.text,
        referenceId: schema.nullableText,
        metadata: schema.jsonObject,
        idempotencyKey: { type: 'string', minLength: 1 },
        createdBy: schema.nullableUuid,
        createdByEmail: { type: 'string', minLength: 1 },
      },
    };
  }
}
