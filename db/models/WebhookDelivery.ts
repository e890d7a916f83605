import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** One event for one endpoint (services/integrations/webhookDeliveries.ts): its state, attempts and next retry. */
export class WebhookDelivery extends BaseModel {
  static override tableName = 'webhook_deliveries';
  static override touchesUpdatedAt = true;
  static override numericAttributes = ['seq'];

  id!: string;
  seq!: number;
  endpointId!: string;
  eventId!: string;
  status!: 'pending' | 'succeeded' | 'failed';
  attempts!: number;
  lastStatusCode!: number | null;
  lastError!: string | null;
  lastLatencyMs!: number | null;
  nextAttemptAt!: Date | null;
  deliveredAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['endpointId', 'eventId'],
    properties: {
      id: schema.uuid,
      endpointId: schema.uuid,
      eventId: schema.uuid,
      status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
      attempts: { type: 'integer', minimum: 0 },
      lastStatusCode: { type: ['integer', 'null'] },
      lastError: schema.nullableText,
      lastLatencyMs: { type: ['integer', 'null'], minimum: 0 },
    },
  };
}
