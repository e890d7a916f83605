import type { JSONSchema } from 'objection';
import type { WebhookEventType } from '../../domain/webhooks';
import { BaseModel, schema } from './BaseModel';

/**
 * A workspace's webhook receiver (services/integrations/webhookEndpoints.ts): the event types it subscribes to and
 * its signing secret; during a rotation the previous secret signs too until `previousSecretExpiresAt`.
 */
export class WebhookEndpoint extends BaseModel {
  static override tableName = 'webhook_endpoints';
  static override touchesUpdatedAt = true;

  id!: string;
  workspaceId!: string;
  url!: string;
  description!: string;
  eventTypes!: WebhookEventType[];
  secret!: string;
  previousSecret!: string | null;
  previousSecretExpiresAt!: Date | null;
  status!: 'enabled' | 'disabled';
  disabledReason!: string | null;
  disabledAt!: Date | null;
  consecutiveFailures!: number;
  failingSince!: Date | null;
  createdBy!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'url', 'eventTypes', 'secret'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      url: { type: 'string', minLength: 8, maxLength: 2048 },
      description: { type: 'string' },
      eventTypes: { type: 'array', items: { type: 'string' } },
      secret: { type: 'string', minLength: 1 },
      previousSecret: schema.nullableText,
      status: { type: 'string', enum: ['enabled', 'disabled'] },
      disabledReason: schema.nullableText,
      consecutiveFailures: { type: 'integer', minimum: 0 },
    },
  };
}
