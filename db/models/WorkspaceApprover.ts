import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** A named approver of a workspace whose approval policy is "these approvers" (services/workspaces/approvalPolicy.ts). */
export class WorkspaceApprover extends BaseModel {
  static override tableName = 'workspace_approvers';
  static override idColumn = ['workspace_id', 'user_id'];

  workspaceId!: string;
  userId!: string;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'userId'],
    properties: { workspaceId: schema.uuid, userId: schema.uuid },
  };
}
