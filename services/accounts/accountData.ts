/**
 * Data export and account deletion for the API (Account Settings > Settings).
 *
 * Exports: each request is numbered per user (n = the user's export count + 1) and runs the workflow
 * `export-<userId>-<n>`. The status call answers from the workflow's query while it runs and from the
 * data_exports row once it has closed. The zip is written to the `videos` bucket under
 * exports/<userId>/<exportId>/render-studio-export-<date>-<n>.zip: a private location (the files route serves it
 * only through a signed link; the export id in the path is random, so the address cannot be guessed either), under
 * one prefix per user so an account deletion removes it with the rest, and never listed in any library. Its link
 * is signed to expire 24 hours after the zip was written; a newer export removes the older zip.
 *
 * Deletion: the typed e-mail must be the account's, and the user must not be the only owner of a workspace with other
 * members (409 ONLY_OWNER, services/accounts/accountWorkspaces.ts). That check and the account's deletion mark are one
 * transaction under the workspace row locks; then the workflow `account-deletion-<userId>` is started (or joined) and
 * every session ended at once, so the user is signed out before the answer and cannot sign in again while the
 * workflow removes the rest. The workflow's first step checks again (a change that raced the API's check) and, when
 * it refuses, takes the mark back; the API then answers the same 409 if the workflow ended within its wait.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { DataExport } from '../../db/models/DataExport';
import { User } from '../../db/models/User';
import {
  ACCOUNT_DATA_MESSAGES,
  ACCOUNT_DELETION_ERROR_CODES,
  DATA_EXPORT_ERROR_CODES,
  accountDeletionWorkflowId,
  confirmsEmail,
  dataExportWorkflowId,
  onlyOwnerMessage,
  type AccountDeletionAnswer,
  type SoleOwnedWorkspace,
  type DataExportView,
} from '../../domain/accountData';
import { DomainError } from '../../domain/errors';
import { isBucket, type Storage } from '../../storage';
import type { AccountDeletionInput, AccountDeletionResult } from '../../domain/workflowContracts/accountDeletion';
import { jobSearchAttributes } from '../../domain/searchAttributes';
import { dataExportStateQuery, type DataExportInput, type DataExportResult, type DataExportState } from '../../domain/workflowContracts/dataExport';
import { TIMED_OUT, withTimeout } from '../platform/timeouts';
import { queryWorkflowOrNull } from '../platform/workflowQuery';
import { soleOwnedSharedWorkspaces } from './accountWorkspaces';
import { currentTraceId } from '../../config/tracing';

/** The workflows' signatures (workflows/dataExport.ts, workflows/accountDeletion.ts), started by their type names: services do not import workflows. */
type DataExportWorkflow = (input: DataExportInput) => Promise<DataExportResult>;
type AccountDeletionWorkflow = (input: AccountDeletionInput) => Promise<AccountDeletionResult>;

export interface AccountDataDeps {
  knex: Knex;
  storage: Storage;
  client: () => Promise<Client>;
  /** The queue both workflows run on (TASK_QUEUES.accountData unless a test runs its own worker). */
  taskQueue: string;
  logger?: Logger;
  /** How long a status read waits for the workflow's query before answering from the row (ms). */
  queryTimeoutMs?: number;
  /** How long the deletion call waits for the workflow to finish before answering 'deleting' (ms). */
  deletionWaitMs?: number;
  now?: () => number;
}

export class ConfirmEmailMismatchError extends DomainError {
  constructor(message: string = ACCOUNT_DATA_MESSAGES.confirmEmailMismatch) {
    super(400, ACCOUNT_DELETION_ERROR_CODES.confirmMismatch, message);
  }
}

/**
 * 409: the user is the only owner of a workspace with other members (DESIGN.md "Teams (workspaces)"); nothing is
 * changed until they transfer its ownership or remove its members.
 */
export class OnlyOwnerError extends DomainError {
  constructor(readonly workspaces: SoleOwnedWorkspace[]) {
    super(409, ACCOUNT_DELETION_ERROR_CODES.onlyOwner, onlyOwnerMessage(workspaces));
  }
}

const RUNNING: readonly string[] = ['pending', 'processing'];

export class AccountDataService {
  private readonly queryTimeoutMs: number;
  private readonly deletionWaitMs: number;
  private readonly now: () => number;

  constructor(private readonly deps: AccountDataDeps) {
    this.queryTimeoutMs = deps.queryTimeoutMs ?? 2_000;
    this.deletionWaitMs = deps.deletionWaitMs ?? 10_000;
    this.now = deps.now ?? Date.now;
  }

  private async connect(message: string, code: string): Promise<Client> {
    try {
      return await this.deps.client();
    } catch (err) {
      this.deps.logger?.error({ err }, 'temporal unavailable');
      throw new DomainError(503, code, message);
    }
  }

  /** Starts the user's next export; while one is still running, answers that one instead of starting another. */
  async requestExport(userId: string): Promise<DataExportView> {
    const running = await DataExport.query(this.deps.knex).where({ workspace_id: userId }).whereIn('status', RUNNING).orderBy('sequence', 'desc').first();
    if (running) return this.view(running);

    const client = await this.connect(ACCOUNT_DATA_MESSAGES.exportStartFailed, DATA_EXPORT_ERROR_CODES.startFailed);
    const row = await this.deps.knex.transaction(async (trx) => {
      // the profile lock orders simultaneous requests, so each gets its own n
      await trx('profiles').where({ id: userId }).forUpdate().first('id');
      const again = await DataExport.query(trx).where({ workspace_id: userId }).whereIn('status', RUNNING).first();
      if (again) return { row: again, fresh: false };
      const { count } = (await trx('data_exports').where({ workspace_id: userId }).count<{ count: string }[]>({ count: '*' }))[0];
      const sequence = Number(count) + 1;
      const id = randomUUID();
      const inserted = await DataExport.query(trx).insertAndFetch({
        id,
        workspaceId: userId,
        sequence,
        workflowId: dataExportWorkflowId(userId, sequence),
        status: 'pending',
        progress: 0,
        message: ACCOUNT_DATA_MESSAGES.exportQueued,
        traceId: currentTraceId(),
      });
      return { row: inserted, fresh: true };
    });
    if (!row.fresh) return this.view(row.row);

    const input: DataExportInput = { exportId: row.row.id, userId, sequence: row.row.sequence };
    try {
      await client.workflow.start<DataExportWorkflow>('dataExportWorkflow', {
        workflowId: row.row.workflowId,
        taskQueue: this.deps.taskQueue,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        typedSearchAttributes: jobSearchAttributes({ workspaceId: userId, kind: 'export', itemId: row.row.id }),
        args: [input],
      });
    } catch (err) {
      this.deps.logger?.error({ err, workflowId: row.row.workflowId }, 'data export workflow could not start');
      await DataExport.query(this.deps.knex).patch({ status: 'failed', error: ACCOUNT_DATA_MESSAGES.exportStartFailed, message: ACCOUNT_DATA_MESSAGES.exportStartFailed }).where({ id: row.row.id });
      throw new DomainError(503, DATA_EXPORT_ERROR_CODES.startFailed, ACCOUNT_DATA_MESSAGES.exportStartFailed);
    }
    return this.view(row.row);
  }

  /** The user's latest export with its progress, or its signed download link once ready; null when there is none. */
  async latestExport(userId: string): Promise<DataExportView | null> {
    const row = await DataExport.query(this.deps.knex).where({ workspace_id: userId }).orderBy('sequence', 'desc').first();
    return row ? this.view(row) : null;
  }

  private async liveState(row: DataExport): Promise<DataExportState | null> {
    if (!RUNNING.includes(row.status)) return null;
    return queryWorkflowOrNull(() => this.deps.client(), row.workflowId, dataExportStateQuery, {
      timeoutMs: this.queryTimeoutMs,
      logger: this.deps.logger,
      what: 'export',
    });
  }

  private async view(found: DataExport): Promise<DataExportView> {
    const live = await this.liveState(found);
    // finished while we asked: the row now holds the file
    const row = live?.status === 'completed' ? ((await DataExport.query(this.deps.knex).findById(found.id)) ?? found) : found;
    const base: DataExportView = {
      id: row.id,
      number: row.sequence,
      workflowId: row.workflowId,
      status: row.status,
      progress: row.progress,
      message: row.message ?? '',
      error: row.error,
      downloadUrl: null,
      fileName: row.fileName,
      sizeBytes: row.sizeBytes,
      fileCount: row.fileCount,
      createdAt: new Date(row.createdAt).toISOString(),
      completedAt: row.completedAt ? new Date(row.completedAt).toISOString() : null,
      expiresAt: row.linkExpiresAt ? new Date(row.linkExpiresAt).toISOString() : null,
    };
    if (live && live.status !== 'completed') {
      // the workflow leads; the row may be a step ahead on progress (written by the writing activity)
      const progress = live.status === 'processing' ? Math.max(live.progress, row.progress) : live.progress;
      return { ...base, status: live.status, progress, message: live.message, error: live.error };
    }
    if (row.status !== 'completed') return base;
    const expiresAt = row.linkExpiresAt ? new Date(row.linkExpiresAt).getTime() : 0;
    const ttlSeconds = Math.floor((expiresAt - this.now()) / 1000);
    if (!row.storageBucket || !row.storagePath || !isBucket(row.storageBucket) || ttlSeconds <= 0) {
      return { ...base, status: 'expired', message: ACCOUNT_DATA_MESSAGES.exportExpired };
    }
    return { ...base, downloadUrl: this.deps.storage.urls.sign(row.storageBucket, row.storagePath, ttlSeconds) };
  }

  /**
   * Checks the typed e-mail, starts (or joins) `account-deletion-<userId>`, then marks the account and ends every
   * session of the user. Waits a little for the workflow, answering 'deleted' when it finished in that time.
   */
  async requestDeletion(userId: string, confirmEmail: string | undefined): Promise<AccountDeletionAnswer> {
    const typed = (confirmEmail ?? '').trim();
    if (!typed) throw new ConfirmEmailMismatchError(ACCOUNT_DATA_MESSAGES.confirmEmailRequired);
    const user = await User.query(this.deps.knex).findById(userId);
    if (!user) throw new DomainError(404, 'ACCOUNT_NOT_FOUND', 'Account not found');
    if (!confirmsEmail(typed, user.email)) throw new ConfirmEmailMismatchError();
    const workflowId = accountDeletionWorkflowId(userId);
    const client = await this.connect(ACCOUNT_DATA_MESSAGES.deletionStartFailed, ACCOUNT_DELETION_ERROR_CODES.startFailed);
    // checked and marked in one transaction, before the workflow starts: its first step checks again under the same
    // lock (an invitation accepted or an ownership change meanwhile), and finds the mark already there to undo
    const marking = await this.deps.knex.transaction(async (trx) => {
      const row = await trx('users').where({ id: userId }).forUpdate().first<{ deletion_requested_at: Date | null } | undefined>('deletion_requested_at');
      const blocking = await soleOwnedSharedWorkspaces(trx, userId, { lock: true });
      if (blocking.length > 0) return { blocking, markedNow: false };
      await trx('users').where({ id: userId }).update({ deletion_requested_at: trx.raw('coalesce(deletion_requested_at, now())') });
      return { blocking, markedNow: !row?.deletion_requested_at };
    });
    if (marking.blocking.length > 0) throw new OnlyOwnerError(marking.blocking);

    const input: AccountDeletionInput = { userId };
    let handle;
    try {
      handle = await client.workflow.start<AccountDeletionWorkflow>('accountDeletionWorkflow', {
        workflowId,
        taskQueue: this.deps.taskQueue,
        // a second request joins the running deletion instead of failing or starting another
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        typedSearchAttributes: jobSearchAttributes({ workspaceId: userId, kind: 'account-deletion', itemId: userId }),
        args: [input],
      });
    } catch (err) {
      this.deps.logger?.error({ err, workflowId }, 'account deletion workflow could not start');
      // nothing runs: the account is usable again (unless an earlier request's deletion marked it)
      if (marking.markedNow) await this.deps.knex('users').where({ id: userId }).update({ deletion_requested_at: null });
      throw new DomainError(503, ACCOUNT_DELETION_ERROR_CODES.startFailed, ACCOUNT_DATA_MESSAGES.deletionStartFailed);
    }
    await this.deps.knex('sessions').where({ user_id: userId }).delete();
    const outcome = await withTimeout(
      handle.result().catch(() => null),
      this.deletionWaitMs,
    );
    const result = outcome === TIMED_OUT ? null : outcome;
    // the workflow's own check refused (a race): nothing was deleted and the account is usable again
    if (result?.refused?.length) throw new OnlyOwnerError(result.refused);
    return { success: true, status: result ? 'deleted' : 'deleting', workflowId };
  }
}
