import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** One attempt of a webhook delivery with the receiver's answer, bodies truncated, for the delivery log. */
export class WebhookDeliveryAttempt extends BaseModel {
  static override tableName = 'webhook_delivery_attempts';
  static override numericAttributes = ['id'];

  id!: number;
  deliveryId!: string;
  attemptedAt!: Date;
  statusCode!: number | null;
  error!: string | null;
  latencyMs!: number | null;
  requestBody!: string | null;
  responseBody!: string | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['deliveryId'],
    properties: {
      deliveryId: schema.uuid,
      statusCode: { type: ['integer', 'null'] },
      error: schema.nullableText,
      latencyMs: { type: ['integer', 'null'], minimum: 0 },
      requestBody: schema.nullableText,
      responseBody: schema.nullableText,
    },
  };
}
