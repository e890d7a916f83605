import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A right password waiting for its second step (services/accounts/secondFactor.ts): `id` is the sha256 of the token the
 * browser holds; 5 minutes, once, at most 5 wrong codes. No session exists until the second step.
 */
export class PendingSignIn extends BaseModel {
  static override tableName = 'pending_sign_ins';

  id!: string;
  userId!: string;
  userAgent!: string | null;
  ipAddress!: string | null;
  failures!: number;
  createdAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['id', 'userId', 'expiresAt'],
    properties: { id: { type: 'string', pattern: '^[0-9a-f]{64}$' }, userId: schema.uuid, userAgent: schema.nullableText, ipAddress: schema.nullableText },
  };
}
