import type { JSONSchema } from 'objection';
import type { InvitableRole } from '../../domain/workspaceRoles';
import { INVITABLE_ROLES } from '../../domain/workspaceRoles';
import { BaseModel, schema } from './BaseModel';

/**
 * An invitation to a workspace: bound to an e-mail and a role, single use, open for 7 days. Only the sha256 of its
 * token is kept; the token itself is in the link the inviter copies or the e-mail sends.
 */
export class WorkspaceInvitation extends BaseModel {
  static override tableName = 'workspace_invitations';

  id!: string;
  workspaceId!: string;
  email!: string;
  role!: InvitableRole;
  tokenHash!: string;
  invitedBy!: string | null;
  expiresAt!: Date;
  acceptedAt!: Date | null;
  acceptedBy!: string | null;
  revokedAt!: Date | null;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'email', 'role', 'tokenHash', 'expiresAt'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      email: { type: 'string', minLength: 3, maxLength: 254 },
      role: { type: 'string', enum: [...INVITABLE_ROLES] },
      tokenHash: { type: 'string', minLength: 64, maxLength: 64 },
      invitedBy: schema.nullableUuid,
      acceptedBy: schema.nullableUuid,
    },
  };
}
