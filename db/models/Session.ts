import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { User } from './User';

/** A server-side session. `id` is the sha256 (hex) of the token the client holds; the token is never stored. */
export class Session extends BaseModel {
  static override tableName = 'sessions';

  id!: string;
  userId!: string;
  createdAt!: Date;
  expiresAt!: Date;

  user?: User;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['id', 'userId', 'expiresAt'],
    properties: {
      id: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      userId: schema.uuid,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    user: { relation: BaseModel.BelongsToOneRelation, modelClass: User, join: { from: 'sessions.user_id', to: 'users.id' } },
  });
}
