import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/** A guest's session of one review link (a visit the members see): who the guest said they are, and when they came. */
export class ReviewLinkSession extends BaseModel {
  static override tableName = 'review_link_sessions';

  id!: string;
  reviewLinkId!: string;
  guestName!: string | null;
  guestEmail!: string | null;
  createdAt!: Date;
  lastSeenAt!: Date;
  expiresAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['reviewLinkId'],
    properties: { id: schema.uuid, reviewLinkId: schema.uuid, guestName: schema.nullableText, guestEmail: schema.nullableText },
  };
}
