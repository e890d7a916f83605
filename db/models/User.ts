import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { Profile } from './Profile';
import { Session } from './Session';

export type UserRole = 'user' | 'admin';

export class User extends BaseModel {
  static override tableName = 'users';
  static override touchesUpdatedAt = true;

  id!: string;
  email!: string;
  passwordHash!: string;
  role!: UserRole;
  /** Set when the owner asked for the account's deletion: no sign-in from then on (services/accounts/accountData.ts). */
  deletionRequestedAt!: Date | null;
  /** When the account's e-mail was verified; null until then (services/accounts/emailVerification.ts). */
  emailVerifiedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  profile?: Profile;
  sessions?: Session[];

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['email', 'passwordHash'],
    properties: {
      id: schema.uuid,
      email: { type: 'string', minLength: 3, maxLength: 254 },
      passwordHash: { type: 'string', minLength: 1 },
      role: { type: 'string', enum: ['user', 'admin'] },
    },
  };

  static override relationMappings = (): RelationMappings => ({
    profile: { relation: BaseModel.HasOneRelation, modelClass: Profile, join: { from: 'users.id', to: 'profiles.id' } },
    sessions: { relation: BaseModel.HasManyRelation, modelClass: Session, join: { from: 'users.id', to: 'sessions.user_id' } },
  });
}
