import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** A received Stripe webhook event, keyed by Stripe's event id so a replay is recognised. */
export class StripeEvent extends BaseModel {
  static override tableName = 'stripe_events';
  static override jsonAttributes = ['payload'];

  id!: string;
  type!: string;
  payload!: Record<string, unknown>;
  receivedAt!: Date;
  processedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['id', 'type', 'payload'],
    properties: {
      id: schema.nonBlank,
      type: schema.nonBlank,
      payload: schema.jsonObject,
    },
  };
}
