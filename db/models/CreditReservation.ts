import type { JSONSchema } from 'objection';
import type { ContentType } from '../../domain/constants';
import { BaseModel, schema } from './BaseModel';

export const RESERVATION_STATUSES = ['active', 'consumed', 'released'] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

/**
 * Credits held for one generated item until its approval consumes them or its rejection / expiry releases them.
 * profiles.reserved_credits is always the sum of the profile's active reservations.
 */
export class CreditReservation extends BaseModel {
  static override tableName = 'credit_reservations';
  static override jsonAttributes = ['metadata'];

  id!: string;
  workspaceId!: string;
  contentType!: ContentType;
  amount!: number;
  status!: ReservationStatus;
  idempotencyKey!: string;
  description!: string;
  metadata!: Record<string, unknown>;
  createdAt!: Date;
  settledAt!: Date | null;

  static override get jsonSchema(): JSONSchema {
    return {
      type: 'object',
      required: ['workspaceId', 'contentType', 'amount', 'idempotencyKey'],
      properties: {
        workspaceId: schema.uuid,
        contentType: { type: 'string', enum: ['image', 'clip', 'assembly'] },
        amount: schema.nonNegativeInt,
        status: { type: 'string', enum: [...RESERVATION_STATUSES] },
        idempotencyKey: { type: 'string', minLength: 1 },
        description: schema.text,
        metadata: schema.jsonObject,
      },
    };
  }
}
