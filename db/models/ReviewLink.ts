import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A review link (issue 43, services/review/reviewLinks.ts): a set of a workspace's items shared with a guest who has
 * no account. Only the sha256 of its token is kept; an optional password is an scrypt hash.
 */
export class ReviewLink extends BaseModel {
  static override tableName = 'review_links';
  static override touchesUpdatedAt = true;

  id!: string;
  workspaceId!: string;
  createdBy!: string | null;
  /** the project whose queue was shared whole; null for chosen items */
  projectId!: string | null;
  tokenHash!: string;
  title!: string;
  message!: string;
  passwordHash!: string | null;
  canDecide!: boolean;
  canDownload!: boolean;
  expiresAt!: Date;
  revokedAt!: Date | null;
  revokedBy!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'tokenHash', 'title'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      projectId: schema.nullableUuid,
      tokenHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      title: { type: 'string', minLength: 1, maxLength: 120, pattern: '\\S' },
      message: { type: 'string', maxLength: 2000 },
      passwordHash: schema.nullableText,
      canDecide: { type: 'boolean' },
      canDownload: { type: 'boolean' },
      revokedBy: schema.nullableUuid,
    },
  };
}
