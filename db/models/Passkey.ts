import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** A WebAuthn credential of a person (services/accounts/passkeys.ts): its public key and signature counter, and a name. */
export class Passkey extends BaseModel {
  static override tableName = 'passkeys';
  static override numericAttributes = ['signCount'];

  id!: string;
  userId!: string;
  name!: string;
  /** the credential id (base64url) the authenticator answers with */
  credentialKey!: string;
  publicKey!: Buffer;
  signCount!: number;
  transports!: string[];
  backedUp!: boolean;
  createdAt!: Date;
  lastUsedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['userId', 'name', 'credentialKey'],
    properties: { id: schema.uuid, userId: schema.uuid, name: schema.nonBlank, credentialKey: schema.nonBlank },
  };
}
