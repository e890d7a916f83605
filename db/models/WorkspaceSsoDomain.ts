import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** An e-mail domain whose addresses sign in through a workspace's own provider; a domain belongs to one workspace. */
export class WorkspaceSsoDomain extends BaseModel {
  static override tableName = 'workspace_sso_domains';
  static override idColumn = 'domain';

  domain!: string;
  workspaceId!: string;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['domain', 'workspaceId'],
    properties: {
      domain: { type: 'string', minLength: 1, pattern: '^[^A-Z]+$' },
      workspaceId: schema.uuid,
    },
  };
}
