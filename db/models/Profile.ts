import { Model, RelationMappings, snakeCaseMappers } from 'objection';
import { User } from './User';

/**
 * A user's profile and credit counters. `id` equals the user's id. Balance columns change only through the
 * credit ledger (services/credits.ts), never by a plain patch.
 */
export class Profile extends Model {
  static override tableName = 'profiles';
  static override columnNameMappers = snakeCaseMappers();

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

  static override jsonSchema = {
    type: 'object',
    required: ['id', 'email'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      email: { type: 'string', minLength: 3, maxLength: 254 },
      name: { type: 'string', maxLength: 100 },
      credits: { type: 'integer', minimum: 0 },
      reservedCredits: { type: 'integer', minimum: 0 },
    },
  };

  static override relationMappings = (): RelationMappings => {
    return {
      user: { relation: Model.BelongsToOneRelation, modelClass: User, join: { from: 'profiles.id', to: 'users.id' } },
    };
  };
}
