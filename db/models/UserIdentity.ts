import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A person at an OpenID provider (issuer + subject) and the account they sign in to by single sign-on
 * (services/accounts/singleSignOn.ts), remembered at their first sign-in.
 */
export class UserIdentity extends BaseModel {
  static override tableName = 'user_identities';

  id!: string;
  issuer!: string;
  subject!: string;
  userId!: string;
  /** the address the provider gave at the last sign-in */
  email!: string;
  createdAt!: Date;
  lastSignInAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['issuer', 'subject', 'userId', 'email'],
    properties: {
      id: schema.uuid,
      issuer: { type: 'string', minLength: 1 },
      subject: { type: 'string', minLength: 1 },
      userId: schema.uuid,
      email: { type: 'string', minLength: 3, maxLength: 254 },
    },
  };
}
