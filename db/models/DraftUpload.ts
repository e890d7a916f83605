import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

export type DraftUploadPurpose = 'image' | 'reference';

/**
 * A file uploaded into an Enhance Renders draft (services/generation/draftUploads.ts), recorded before its bytes are
 * stored: it holds a slot of the draft's limits until add-images (an image) or a dispatch (a reference) registers it,
 * or the sweep removes it with its object.
 */
export class DraftUpload extends BaseModel {
  static override tableName = 'draft_uploads';
  static override numericAttributes = ['size'];

  id!: string;
  workspaceId!: string;
  draftId!: string;
  purpose!: DraftUploadPurpose;
  bucket!: string;
  /** Set once the content is typed, before the object is written. */
  path!: string | null;
  size!: number | null;
  createdAt!: Date;
  storedAt!: Date | null;
  registeredAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['id', 'workspaceId', 'draftId', 'purpose', 'bucket'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      draftId: schema.uuid,
      purpose: { type: 'string', enum: ['image', 'reference'] },
      bucket: schema.nonBlank,
      path: schema.nullableText,
    },
  };
}
