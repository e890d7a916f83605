import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A workspace's own OpenID provider (services/workspaces/workspaceSingleSignOn.ts): issuer, client, the client secret
 * sealed with AES-256-GCM (services/workspaces/ssoClientSecrets.ts; never answered), the sign-in button's name and
 * whether the workspace's domains must sign in through it.
 */
export class WorkspaceSsoProvider extends BaseModel {
  static override tableName = 'workspace_sso_providers';
  static override idColumn = 'workspace_id';

  workspaceId!: string;
  issuerUrl!: string;
  clientId!: string;
  clientSecretCiphertext!: string;
  displayName!: string;
  ssoRequired!: boolean;
  updatedByUserId!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'issuerUrl', 'clientId', 'clientSecretCiphertext', 'displayName'],
    properties: {
      workspaceId: schema.uuid,
      issuerUrl: { type: 'string', minLength: 1 },
      clientId: { type: 'string', minLength: 1 },
      clientSecretCiphertext: { type: 'string', pattern: '^v1\\.' },
      displayName: { type: 'string', minLength: 1 },
      ssoRequired: { type: 'boolean' },
      updatedByUserId: schema.nullableUuid,
    },
  };
}
