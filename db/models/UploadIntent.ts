import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * An upload's claim on the object it is about to store (services/content/uploadIntents.ts): written before the put,
 * marked `storedAt` when the object is visible, removed with the transaction that records the render. A claim whose
 * object was stored minutes ago and never recorded is what the abandoned-upload sweep removes, object and claim.
 */
export class UploadIntent extends BaseModel {
  static override tableName = 'upload_intents';

  id!: string;
  bucket!: string;
  path!: string;
  workspaceId!: string;
  createdAt!: Date;
  storedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['bucket', 'path', 'workspaceId'],
    properties: {
      bucket: schema.nonBlank,
      path: schema.nonBlank,
      workspaceId: schema.uuid,
    },
  };
}
