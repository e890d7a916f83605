import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * One "Sign in with ..." in progress (services/accounts/singleSignOn.ts): the PKCE verifier and nonce kept on the
 * server under the sha256 of the state; good until `expiresAt`, and once (`usedAt`).
 */
export class SsoSignInAttempt extends BaseModel {
  static override tableName = 'sso_sign_in_attempts';
  static override idColumn = 'state_hash';

  stateHash!: string;
  issuer!: string;
  codeVerifier!: string;
  nonce!: string;
  /** the workspace whose provider the sign-in was started with; null: the installation's */
  workspaceId!: string | null;
  createdAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['stateHash', 'issuer', 'codeVerifier', 'nonce', 'expiresAt'],
    properties: {
      stateHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      issuer: { type: 'string', minLength: 1 },
      codeVerifier: { type: 'string', minLength: 43, maxLength: 128 },
      nonce: { type: 'string', minLength: 1 },
      workspaceId: schema.nullableUuid,
    },
  };
}
