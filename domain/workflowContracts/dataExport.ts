/**
 * The data export workflow's contract (id `export-<userId>-<n>`): input, result, state query, progress signal.
 * Shared by the workflow, its activities and the API, so none of them imports another's module.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export interface DataExportInput {
  exportId: string;
  userId: string;
  sequence: number;
}

export interface DataExportResult {
  bucket: string;
  path: string;
  fileName: string;
  sizeBytes: number;
  fileCount: number;
}

export type DataExportStatus = 'pending' | 'processing' | 'completed' | 'failed';

export interface DataExportState {
  status: DataExportStatus;
  progress: number;
  message: string;
  error: string | null;
  result: DataExportResult | null;
}

export interface DataExportProgress {
  progress: number;
  message: string;
}

export const dataExportStateQuery = defineQuery<DataExportState>('dataExportState');
export const dataExportProgressSignal = defineSignal<[DataExportProgress]>('dataExportProgress');
