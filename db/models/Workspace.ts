import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A workspace: the account that owns projects, drafts, purchases and the credit balance (its `profiles` row has the
 * same id). `personalUserId` is set on a user's personal workspace, whose id is that user's id.
 */
export class Workspace extends BaseModel {
  static override tableName = 'workspaces';
  static override touchesUpdatedAt = true;

  id!: string;
  name!: string;
  personalUserId!: string | null;
  createdBy!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['name'],
    properties: {
      id: schema.uuid,
      name: { ...schema.nonBlank, maxLength: 100 },
      personalUserId: schema.nullableUuid,
      createdBy: schema.nullableUuid,
    },
  };
}
