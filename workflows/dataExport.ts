/**
 * One data export (id `export-<userId>-<n>`): the writing activity streams the user's profile, projects, item
 * metadata, ledger and every stored file into a zip in private storage, reporting progress with
 * `dataExportProgressSignal`; the state answers the status call through `dataExportStateQuery`.
 */
import { CancellationScope, defineQuery, defineSignal, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { ACCOUNT_DATA_MESSAGES } from '../domain/accountData';

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

type Activities = ReturnType<typeof createActivities>;

const { recordDataExport } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds' },
});

// streams every file of the user: long, so it heartbeats, and a dead worker is noticed within a minute
const { writeDataExport } = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** Where the export's own progress stops before the file is recorded. */
const WRITTEN = 98;

export async function dataExportWorkflow(input: DataExportInput): Promise<DataExportResult> {
  const state: DataExportState = { status: 'pending', progress: 0, message: ACCOUNT_DATA_MESSAGES.exportQueued, error: null, result: null };
  setHandler(dataExportStateQuery, () => state);
  setHandler(dataExportProgressSignal, (report) => {
    // progress only moves forward while the zip is being written
    if (state.status !== 'processing' || report.progress <= state.progress || report.progress > WRITTEN) return;
    state.progress = report.progress;
    state.message = report.message;
  });

  try {
    state.status = 'processing';
    state.progress = 2;
    state.message = ACCOUNT_DATA_MESSAGES.exportCollecting;
    await recordDataExport({ exportId: input.exportId, status: 'processing', progress: state.progress, message: state.message });

    const result = await writeDataExport(input);

    await recordDataExport({ exportId: input.exportId, status: 'completed', progress: 100, message: ACCOUNT_DATA_MESSAGES.exportReady, result });
    state.status = 'completed';
    state.progress = 100;
    state.message = ACCOUNT_DATA_MESSAGES.exportReady;
    state.result = result;
    return result;
  } catch (err) {
    const cancelled = isCancellation(err);
    const message = cancelled ? ACCOUNT_DATA_MESSAGES.exportCancelled : ACCOUNT_DATA_MESSAGES.exportFailed;
    state.status = 'failed';
    state.message = message;
    state.error = message;
    await CancellationScope.nonCancellable(() =>
      recordDataExport({ exportId: input.exportId, status: 'failed', progress: state.progress, message, error: message }),
    );
    throw err;
  }
}
