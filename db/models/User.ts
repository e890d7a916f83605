import { Model, RelationMappings, snakeCaseMappers } from 'objection';
import { Profile } from './Profile';
import { Session } from './Session';

export type UserRole = 'user' | 'admin';

export class User extends Model {
  static override tableName = 'users';
  static override columnNameMappers = snakeCaseMappers();

  id!: string;
  email!: string;
  passwordHash!: string;
  role!: UserRole;
  createdAt!: Date;
  updatedAt!: Date;

  profile?: Profile;
  sessions?: Session[];

  static override jsonSchema = {
    type: 'object',
    required: ['email', 'passwordHash'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      email: { type: 'string', minLength: 3, maxLength: 254 },
      passwordHash: { type: 'string', minLength: 1 },
      role: { type: 'string', enum: ['user', 'admin'] },
    },
  };

  // a function, so the models' circular imports are resolved by the time objection asks
  static override relationMappings = (): RelationMappings => {
    return {
      profile: { relation: Model.HasOneRelation, modelClass: Profile, join: { from: 'users.id', to: 'profiles.id' } },
      sessions: { relation: Model.HasManyRelation, modelClass: Session, join: { from: 'users.id', to: 'sessions.user_id' } },
    };
  };
}
