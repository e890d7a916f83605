import type { JSONSchema } from 'objection';
import { ACCESS_TOKEN_NAME_MAX, TOKEN_SCOPES, type TokenScope } from '../../domain/accessTokens';
import { BaseModel, schema } from './BaseModel';

/**
 * A personal access token (services/accounts/accessTokens.ts). Only the sha256 of the token is kept (`tokenHash`);
 * `prefix` is its first characters, for lists. Revoked tokens keep their row.
 */
export class AccessToken extends BaseModel {
  static override tableName = 'access_tokens';

  id!: string;
  userId!: string;
  name!: string;
  prefix!: string;
  tokenHash!: string;
  scopes!: TokenScope[];
  expiresAt!: Date | null;
  lastUsedAt!: Date | null;
  lastUsedIp!: string | null;
  createdAt!: Date;
  revokedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['userId', 'name', 'prefix', 'tokenHash', 'scopes'],
    properties: {
      id: schema.uuid,
      userId: schema.uuid,
      name: { type: 'string', minLength: 1, maxLength: ACCESS_TOKEN_NAME_MAX },
      prefix: { type: 'string', minLength: 1, maxLength: 20 },
      tokenHash: { type: 'string', minLength: 64, maxLength: 64 },
      scopes: { type: 'array', minItems: 1, items: { type: 'string', enum: [...TOKEN_SCOPES] } },
      lastUsedIp: schema.nullableText,
    },
  };
}
