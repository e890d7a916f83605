import { Model, RelationMappings, snakeCaseMappers } from 'objection';
import { User } from './User';

/** A server-side session. `id` is the sha256 (hex) of the token the client holds; the token is never stored. */
export class Session extends Model {
  static override tableName = 'sessions';
  static override columnNameMappers = snakeCaseMappers();

  id!: string;
  userId!: string;
  createdAt!: Date;
  expiresAt!: Date;

  user?: User;

  static override jsonSchema = {
    type: 'object',
    required: ['id', 'userId', 'expiresAt'],
    properties: {
      id: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      userId: { type: 'string', format: 'uuid' },
    },
  };

  static override relationMappings = (): RelationMappings => {
    return {
      user: { relation: Model.BelongsToOneRelation, modelClass: User, join: { from: 'sessions.user_id', to: 'users.id' } },
    };
  };
}
