import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** One comment of a thread (services/review/comments.ts), with the members its text mentions. */
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

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['threadId', 'workspaceId', 'body'],
    properties: {
      threadId: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      body: { type: 'string', minLength: 1, maxLength: 10000, pattern: '\\S' },
      mentions: { type: 'array', items: { type: 'object' } },
    },
  };
}
