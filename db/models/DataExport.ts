import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

export type DataExportStatus = 'pending' | 'processing' | 'completed' | 'failed';

/** One requested data export (workflow `export-<workspaceId>-<sequence>`); the status call falls back to it once the workflow has closed. */
export class DataExport extends BaseModel {
  static override tableName = 'data_exports';
  static override touchesUpdatedAt = true;
  static override numericAttributes = ['sizeBytes'];

  id!: string;
  workspaceId!: string;
  sequence!: number;
  workflowId!: string;
  status!: DataExportStatus;
  progress!: number;
  message!: string | null;
  error!: string | null;
  storageBucket!: string | null;
  storagePath!: string | null;
  fileName!: string | null;
  sizeBytes!: number | null;
  fileCount!: number | null;
  createdAt!: Date;
  updatedAt!: Date;
  completedAt!: Date | null;
  linkExpiresAt!: Date | null;
  /** the trace the export started in (tracing on), else null */
  traceId!: string | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'sequence', 'workflowId'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      sequence: { type: 'integer', minimum: 1 },
      workflowId: schema.nonBlank,
      status: { type: 'string', enum: ['pending', 'processing', 'completed', 'failed'] },
      progress: schema.progress,
      message: schema.nullableText,
      error: schema.nullableText,
    },
  };
}
