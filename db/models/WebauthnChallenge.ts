import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** A WebAuthn challenge handed to a browser for one registration or assertion (services/accounts/passkeys.ts): 5 minutes, once. */
export class WebauthnChallenge extends BaseModel {
  static override tableName = 'webauthn_challenges';

  id!: string;
  /** null: a password-less sign-in, whose person the passkey names */
  userId!: string | null;
  purpose!: 'registration' | 'authentication';
  challenge!: string;
  createdAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['purpose', 'challenge', 'expiresAt'],
    properties: { id: schema.uuid, userId: schema.nullableUuid, purpose: { type: 'string', enum: ['registration', 'authentication'] }, challenge: schema.text },
  };
}
