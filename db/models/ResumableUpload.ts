import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

export type ResumableUploadStatus = 'uploading' | 'completed' | 'failed' | 'expired' | 'cancelled';

/** A tus upload (services/content/resumableUploads.ts): who may resume it, into which project, and what became of it. */
export class ResumableUpload extends BaseModel {
  static override tableName = 'resumable_uploads';
  static override numericAttributes = ['size'];

  id!: string;
  workspaceId!: string;
  projectId!: string;
  fileName!: string;
  size!: number;
  status!: ResumableUploadStatus;
  renderId!: string | null;
  error!: string | null;
  createdAt!: Date;
  finishedAt!: Date | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['id', 'workspaceId', 'projectId', 'fileName', 'size'],
    properties: {
      id: schema.nonBlank,
      workspaceId: schema.uuid,
      projectId: schema.uuid,
      fileName: schema.nonBlank,
      size: schema.nonNegativeInt,
      status: { type: 'string', enum: ['uploading', 'completed', 'failed', 'expired', 'cancelled'] },
      renderId: schema.nullableUuid,
      error: schema.nullableText,
    },
  };
}
