import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { User } from './User';

/**
 * A user's profile and credit counters; `id` equals the user's id. Balance columns change only through
 * the credit ledger (services/billing/credits.ts), never by a plain patch.
 */
export class Profile extends BaseModel {
  static override tableName = 'profiles';
  static override touchesUpdatedAt = true;

  id!: string;
  email!: string;
  name!: string;
  credits!: number;
  reservedCredits!: number;
  clipCredits!: number;
  imageCredits!: number;
  clipsLimit!: number;
  imagesLimit!: number;
  totalCreditsPurchased!: number;
  totalCreditsAdded!: number;
  totalClipsUsed!: number;
  totalImagesUsed!: number;
  totalAssembliesUsed!: number;
  rejectionStreak!: number;
  rejectionCooldownUntil!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  user?: User;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['id', 'email'],
    properties: {
      id: schema.uuid,
      email: { type: 'string', minLength: 3, maxLength: 254 },
      name: { type: 'string', maxLength: 100 },
      credits: schema.nonNegativeInt,
      reservedCredits: schema.nonNegativeInt,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    user: { relation: BaseModel.BelongsToOneRelation, modelClass: User, join: { from: 'profiles.id', to: 'users.id' } },
  });
}
