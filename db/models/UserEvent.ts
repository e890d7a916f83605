import type { JSONSchema } from 'objection';
import type { RealtimeEvent } from '../../domain/events';
import { BaseModel, schema } from './BaseModel';

/**
 * A published realtime event (services/platform/events.ts), kept an hour so a reconnecting stream can replay what it
 * missed after its Last-Event-ID. `id` is a bigserial: the stream's event id.
 */
export class UserEvent extends BaseModel {
  static override tableName = 'user_events';
  static override jsonAttributes = ['payload'];

  id!: string;
  workspaceId!: string;
  payload!: RealtimeEvent;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'payload'],
    properties: {
      workspaceId: schema.uuid,
      payload: schema.jsonObject,
    },
  };
}
