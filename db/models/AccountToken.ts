import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A one-time link of an account (services/accounts: password reset, e-mail verification, e-mail change): only the
 * sha256 of the link's 32 random bytes is kept; good until `expiresAt`, and once (`usedAt`).
 */
export class AccountToken extends BaseModel {
  static override tableName = 'account_tokens';

  id!: string;
  userId!: string;
  purpose!: 'reset' | 'verify' | 'email_change';
  tokenHash!: string;
  /** the address an `email_change` link confirms */
  newEmail!: string | null;
  createdAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['userId', 'purpose', 'tokenHash', 'expiresAt'],
    properties: {
      id: schema.uuid,
      userId: schema.uuid,
      purpose: { type: 'string', enum: ['reset', 'verify', 'email_change'] },
      tokenHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      newEmail: schema.nullableText,
    },
  };
}
