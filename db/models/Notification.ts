import type { JSONSchema } from 'objection';
import { NOTIFICATION_KINDS, type NotificationKind } from '../../domain/notifications';
import { BaseModel, schema } from './BaseModel';

/** One person's notification in a workspace (services/review/notifications.ts). */
export class Notification extends BaseModel {
  static override tableName = 'notifications';

  id!: string;
  workspaceId!: string;
  userId!: string;
  kind!: NotificationKind;
  itemKind!: string | null;
  itemId!: string | null;
  projectId!: string | null;
  threadId!: string | null;
  createdBy!: string | null;
  text!: string;
  createdAt!: Date;
  readAt!: Date | null;
  emailedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'userId', 'kind', 'text'],
    properties: {
      workspaceId: schema.uuid,
      userId: schema.uuid,
      kind: { type: 'string', enum: [...NOTIFICATION_KINDS] },
      itemKind: schema.nullableText,
      itemId: schema.nullableUuid,
      projectId: schema.nullableUuid,
      threadId: schema.nullableUuid,
      createdBy: schema.nullableUuid,
      text: schema.nonBlank,
    },
  };
}
