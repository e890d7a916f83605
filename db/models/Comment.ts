import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** One comment of a thread (services/review/comments.ts), with the members its text mentions; a member's or a review link guest's. */
export class Comment extends BaseModel {
  static override tableName = 'comments';
  static override jsonAttributes = ['mentions'];

  id!: string;
  threadId!: string;
  workspaceId!: string;
  createdBy!: string | null;
  body!: string;
  mentions!: Array<{ userId: string; name: string }>;
  editedAt!: Date | null;
  createdAt!: Date;
  /** a guest's comment through a review link: the link, and who the guest said they are (createdBy is null) */
  reviewLinkId!: string | null;
  guestName!: string | null;
  guestEmail!: string | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['threadId', 'workspaceId', 'body'],
    properties: {
      threadId: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      body: { type: 'string', minLength: 1, maxLength: 10000, pattern: '\\S' },
      mentions: { type: 'array', items: { type: 'object' } },
      reviewLinkId: schema.nullableUuid,
      guestName: schema.nullableText,
      guestEmail: schema.nullableText,
    },
  };
}
