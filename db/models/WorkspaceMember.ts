import type { JSONSchema } from 'objection';
import type { WorkspaceRole } from '../../domain/workspaceRoles';
import { WORKSPACE_ROLES } from '../../domain/workspaceRoles';
import { BaseModel, schema } from './BaseModel';

/** A user's membership of a workspace, with their role (domain/workspaceRoles.ts). */
export class WorkspaceMember extends BaseModel {
  static override tableName = 'workspace_members';
  static override idColumn = ['workspace_id', 'user_id'];
  static override touchesUpdatedAt = true;

  workspaceId!: string;
  userId!: string;
  role!: WorkspaceRole;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'userId', 'role'],
    properties: {
      workspaceId: schema.uuid,
      userId: schema.uuid,
      role: { type: 'string', enum: [...WORKSPACE_ROLES] },
    },
  };
}
