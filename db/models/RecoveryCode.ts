import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** One of a person's 10 single-use recovery codes (services/accounts/recoveryCodes.ts): only its sha256 is kept. */
export class RecoveryCode extends BaseModel {
  static override tableName = 'recovery_codes';

  id!: string;
  userId!: string;
  codeHash!: string;
  createdAt!: Date;
  usedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['userId', 'codeHash'],
    properties: { id: schema.uuid, userId: schema.uuid, codeHash: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
  };
}
