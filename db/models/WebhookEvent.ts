import type { JSONSchema } from 'objection';
import type { WebhookPayload } from '../../domain/webhooks';
import { BaseModel, schema } from './BaseModel';

/**
 * An event in the webhook outbox (services/integrations/webhookOutbox.ts), written in the transaction of the change
 * that caused it. Its id is the `webhook-id` of every delivery of it; `seq` orders events.
 */
export class WebhookEvent extends BaseModel {
  static override tableName = 'webhook_events';
  static override jsonAttributes = ['payload'];
  static override numericAttributes = ['seq'];

  id!: string;
  seq!: number;
  workspaceId!: string;
  type!: string;
  resourceId!: string;
  payload!: WebhookPayload;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'type', 'resourceId', 'payload'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      type: { type: 'string', minLength: 1 },
      resourceId: { type: 'string', minLength: 1 },
      payload: schema.jsonObject,
    },
  };
}
