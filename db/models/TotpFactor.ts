import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A person's authenticator app (services/accounts/totp.ts): the TOTP secret encrypted (never in clear), confirmed by a
 * first code, and the last 30-second step accepted (a code is good once).
 */
export class TotpFactor extends BaseModel {
  static override tableName = 'totp_factors';
  static override idColumn = 'user_id';
  static override numericAttributes = ['lastUsedStep'];

  userId!: string;
  secretCiphertext!: string;
  lastUsedStep!: number | null;
  createdAt!: Date;
  confirmedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['userId', 'secretCiphertext'],
    properties: { userId: schema.uuid, secretCiphertext: schema.text },
  };
}
