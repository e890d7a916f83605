import type { JSONSchema } from 'objection';
import type { CommentItemKind, CommentPin } from '../../domain/comments';
import { BaseModel, schema } from './BaseModel';

/** A comment thread on one item (services/review/comments.ts): its pin, whether it is resolved, and who opened it. */
export class CommentThread extends BaseModel {
  static override tableName = 'comment_threads';
  static override jsonAttributes = ['pin'];

  id!: string;
  workspaceId!: string;
  itemKind!: CommentItemKind;
  itemId!: string;
  pin!: CommentPin | null;
  createdBy!: string | null;
  resolvedAt!: Date | null;
  resolvedBy!: string | null;
  /** the version of the item it was started on, once carried over to a later version ("request changes") */
  onVersion!: number | null;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'itemKind', 'itemId'],
    properties: {
      workspaceId: schema.uuid,
      itemKind: { type: 'string', enum: ['render', 'image', 'clip', 'compiled_video', 'generated', 'approval'] },
      itemId: schema.uuid,
      pin: schema.nullableJsonObject,
      createdBy: schema.nullableUuid,
      resolvedBy: schema.nullableUuid,
      onVersion: { type: ['integer', 'null'] },
    },
  };
}
