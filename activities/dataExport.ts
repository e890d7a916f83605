/**
 * Activities of the data export workflow (workflows/dataExport.ts). The zip is written by archiver as a stream:
 * each stored file is piped from storage into it, one at a time, and the zip itself is piped into storage, so no
 * whole file is ever held in memory. The zip has a fixed path per export and storage never overwrites, so a
 * retry after a crash finds a finished zip and returns it, or writes it again from the start.
 */
import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import archiver from 'archiver';
import { ACCOUNT_DATA_MESSAGES, EXPORT_BUCKET, EXPORT_LINK_TTL_SECONDS, dataExportWorkflowId, exportFileName, exportObjectPath } from '../domain/accountData';
import { ObjectNotFoundError, isBucket } from '../storage';
import { publishEvent, publishEventQuietly } from '../services/platform/events';
import { collectUserRows, listUserFiles, type UserFile } from '../services/accounts/userData';
import { accountMemberships } from '../services/accounts/accountWorkspaces';
import { exportableFiles } from '../services/content/unapprovedOriginals';
import { dataExportProgressSignal, type DataExportInput, type DataExportResult, type DataExportStatus } from '../domain/workflowContracts/dataExport';
import type { ActivityDeps } from './deps';

export interface RecordDataExportInput {
  exportId: string;
  status: DataExportStatus;
  progress: number;
  message: string;
  error?: string | null;
  result?: DataExportResult;
}

export interface DataExportActivityOptions {
  /** Least time between two progress reports to the workflow and the row (ms). */
  progressIntervalMs?: number;
  /** How often the writer heartbeats on its own, besides once per file (ms). */
  heartbeatIntervalMs?: number;
}

/** Where the progress bar stands while files are added: 5 % for the JSON, then by bytes up to 95 %. */
const FILES_START = 5;
const FILES_END = 95;

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The file's name inside the zip: files/<bucket>/<path>, the path it has in storage. */
function entryName(file: Pick<UserFile, 'bucket' | 'path'>): string {
  return `files/${file.bucket}/${file.path}`;
}

interface ManifestFile {
  name: string;
  bucket: string;
  path: string;
  source: string;
  sourceId: string;
  size: number;
  sha256: string;
  /** set on a file of an item that is not approved yet: it is the item's watermarked preview, not its original */
  watermarkedPreview?: true;
}

/** What manifest.json says about items not approved yet (pay on approval: their originals stay on the server). */
export const PENDING_ITEMS_NOTE =
  'Items still waiting for approval (pending_approvals in items.json) are included as their watermarked preview only (files marked watermarkedPreview): ' +
  'the original and its thumbnail are not part of the export until the item is approved.';

export function createDataExportActivities(deps: Pick<ActivityDeps, 'knex' | 'storage' | 'logger'>, options: DataExportActivityOptions = {}) {
  const { knex, storage, logger } = deps;
  const progressIntervalMs = options.progressIntervalMs ?? 1_000;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;

  /** Appends one stored file and resolves once archiver has written it, hashing the bytes on their way through. */
  async function appendFile(archive: archiver.Archiver, file: UserFile, zipDone: Promise<unknown>): Promise<{ size: number; sha256: string } | null> {
    let source: Readable;
    try {
      source = await storage.objects.read(file.bucket, file.path);
    } catch (err) {
      if (err instanceof ObjectNotFoundError) return null;
      throw err;
    }
    const hash = createHash('sha256');
    let size = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    source.on('error', (err) => hashing.destroy(err));
    source.pipe(hashing);
    const name = entryName(file);
    // archiver reports each entry once written; earlier entries (the JSON files) may still be in its queue
    const written = new Promise<void>((resolve, reject) => {
      const onEntry = (entry: archiver.EntryData) => {
        if (entry.name !== name) return;
        archive.off('entry', onEntry);
        archive.off('error', onError);
        resolve();
      };
      const onError = (err: Error) => {
        archive.off('entry', onEntry);
        reject(err);
      };
      archive.on('entry', onEntry);
      archive.once('error', onError);
    });
    // media files are compressed already: stored as they are, which keeps the CPU for the zip's own stream
    archive.append(hashing, { name, store: true });
    await Promise.race([written, zipDone.then(() => Promise.reject(new Error('zip stream ended early')))]);
    return { size, sha256: hash.digest('hex') };
  }

  return {
    /** Writes the export's state to its row; a finished export gets its file and a link lifetime of 24 hours. */
    async recordDataExport(input: RecordDataExportInput): Promise<void> {
      const patch: Record<string, unknown> = {
        status: input.status,
        progress: knex.raw('greatest(progress, ?)', [Math.max(0, Math.min(100, Math.round(input.progress)))]),
        message: input.message,
        error: input.error ?? null,
        updated_at: knex.fn.now(),
      };
      if (input.result) {
        Object.assign(patch, {
          storage_bucket: input.result.bucket,
          storage_path: input.result.path,
          file_name: input.result.fileName,
          size_bytes: input.result.sizeBytes,
          file_count: input.result.fileCount,
          completed_at: knex.fn.now(),
          link_expires_at: knex.raw(`now() + interval '${EXPORT_LINK_TTL_SECONDS} seconds'`),
        });
      }
      // the new zip is written: the older ones go before this one reads as completed, so a user (or a test) that
      // sees it completed never finds two zips; removing is idempotent if this activity runs again
      if (input.status === 'completed') await removeOlderExports(input.exportId);
      // a finished row stays finished: a late retry of an earlier step cannot reopen it
      await knex.transaction(async (trx) => {
        const rows: { id: string; workspace_id: string; status: string; progress: number }[] = await trx('data_exports')
          .where({ id: input.exportId })
          .whereIn('status', ['pending', 'processing'])
          .update(patch)
          .returning(['id', 'workspace_id', 'status', 'progress']);
        for (const row of rows) await publishEvent(trx, row.workspace_id, { kind: 'job', job: 'export', jobId: row.id, status: row.status, progress: row.progress });
      });
    },

    /**
     * Streams profile.json (with the user's workspace memberships: name, role, joined), projects.json, items.json,
     * ledger.json, every stored file of the user (files/<bucket>/<path>)
     * and manifest.json (each file's source row, size and sha256) into the zip at exports/<userId>/<exportId>/.
     * An item not approved yet is carried by its watermarked preview only (services/content/unapprovedOriginals.ts), and the
     * manifest says so (PENDING_ITEMS_NOTE).
     */
    async writeDataExport(input: DataExportInput): Promise<DataExportResult> {
      const ctx = Context.current();
      const row = (await knex('data_exports').where({ id: input.exportId, workspace_id: input.userId }).first('created_at', 'sequence')) as
        | { created_at: Date; sequence: number }
        | undefined;
      if (!row) throw new Error(`data export ${input.exportId} of ${input.userId} not found`);
      const fileName = exportFileName(new Date(row.created_at), row.sequence);
      const path = exportObjectPath(input.userId, input.exportId, fileName);
      const files = await exportableFiles(knex, input.userId, await listUserFiles(knex, input.userId, { includeExports: false, approvals: 'pending' }));

      // written before a crash: storage only links a file in once it is complete
      const existing = await storage.objects.stat(EXPORT_BUCKET, path);
      if (existing) return { bucket: EXPORT_BUCKET, path, fileName, sizeBytes: existing.size, fileCount: files.length };

      const workflowId = ctx.info.workflowExecution?.workflowId ?? dataExportWorkflowId(input.userId, input.sequence);
      let lastReport = 0;
      let reported = 0;
      const report = async (progress: number, message: string, force = false): Promise<void> => {
        const rounded = Math.floor(progress);
        if (rounded <= reported || (!force && Date.now() - lastReport < progressIntervalMs)) return;
        reported = rounded;
        lastReport = Date.now();
        await knex('data_exports')
          .where({ id: input.exportId })
          .whereIn('status', ['pending', 'processing'])
          .update({ progress: knex.raw('greatest(progress, ?)', [rounded]), message, updated_at: knex.fn.now() })
          .returning(['status', 'progress'])
          .then((rows: { status: string; progress: number }[]) =>
            Promise.all(rows.map((row) => publishEventQuietly(knex, input.userId, { kind: 'job', job: 'export', jobId: input.exportId, status: row.status, progress: row.progress }, logger))),
          )
          .catch((err: unknown) => logger.warn({ err, exportId: input.exportId }, 'could not record export progress'));
        await ctx.client.workflow
          .getHandle(workflowId)
          .signal(dataExportProgressSignal, { progress: rounded, message })
          .catch((err: unknown) => logger.warn({ err, workflowId }, 'could not report export progress to the workflow'));
      };

      const archive = archiver('zip', { zlib: { level: 6 } });
      // destroyed, never ended: storage then discards the partial zip instead of keeping a truncated one
      const abort = () => archive.destroy(new CancelledFailure('Data export cancelled'));
      ctx.cancellationSignal.addEventListener('abort', abort);
      const timer = setInterval(() => ctx.heartbeat(), heartbeatIntervalMs);
      // the zip streams into storage while it is written; storage discards it if the stream fails
      const stored = storage.objects.put(EXPORT_BUCKET, path, archive);
      const zipDone = stored.then(
        () => undefined,
        () => undefined,
      );
      try {
        ctx.heartbeat();
        const data = await collectUserRows(knex, input.userId);
        // the workspaces the user belongs to, their own personal one first (DESIGN.md "Teams (workspaces)"); the
        // data and files are the personal workspace's, as the export's account is the user's own
        const memberships = await accountMemberships(knex, input.userId);
        const exportedAt = new Date().toISOString();
        archive.append(json({ exportedAt, profile: data.profile, memberships }), { name: 'profile.json' });
        archive.append(json({ exportedAt, projects: data.projects }), { name: 'projects.json' });
        archive.append(json({ exportedAt, ...data.items }), { name: 'items.json' });
        archive.append(json({ exportedAt, transactions: data.ledger }), { name: 'ledger.json' });
        await report(FILES_START, ACCOUNT_DATA_MESSAGES.exportFiles, true);

        const sizes = await Promise.all(files.map(async (f) => (await storage.objects.stat(f.bucket, f.path))?.size ?? 0));
        const totalBytes = Math.max(1, sizes.reduce((a, b) => a + b, 0));
        let doneBytes = 0;
        const manifest: ManifestFile[] = [];
        const missing: Array<{ bucket: string; path: string; source: string; sourceId: string }> = [];
        for (const [index, file] of files.entries()) {
          if (ctx.cancellationSignal.aborted) throw new CancelledFailure('Data export cancelled');
          ctx.heartbeat({ file: index });
          const added = await appendFile(archive, file, zipDone);
          if (!added) {
            missing.push({ bucket: file.bucket, path: file.path, source: file.source, sourceId: file.sourceId });
            continue;
          }
          const preview = file.source === 'pending_approvals' ? { watermarkedPreview: true as const } : {};
          manifest.push({ name: entryName(file), bucket: file.bucket, path: file.path, source: file.source, sourceId: file.sourceId, ...added, ...preview });
          doneBytes += sizes[index];
          await report(FILES_START + ((FILES_END - FILES_START) * doneBytes) / totalBytes, `${ACCOUNT_DATA_MESSAGES.exportFiles} (${index + 1} of ${files.length})`);
        }
        archive.append(json({ exportedAt, pendingItems: PENDING_ITEMS_NOTE, files: manifest, missing }), { name: 'manifest.json' });
        await report(FILES_END, ACCOUNT_DATA_MESSAGES.exportFinishing, true);
        await archive.finalize();
        const object = await stored;
        return { bucket: EXPORT_BUCKET, path, fileName, sizeBytes: object.size, fileCount: manifest.length };
      } catch (err) {
        archive.destroy(err instanceof Error ? err : new Error(String(err)));
        await stored.catch(() => undefined);
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('Data export cancelled');
        throw err;
      } finally {
        clearInterval(timer);
        ctx.cancellationSignal.removeEventListener('abort', abort);
      }
    },
  };

  /** One zip per user is kept: a new export removes the files of the earlier ones, whose links then read as expired. */
  async function removeOlderExports(exportId: string): Promise<void> {
    const current = (await knex('data_exports').where({ id: exportId }).first('workspace_id', 'sequence')) as { workspace_id: string; sequence: number } | undefined;
    if (!current) return;
    const older = (await knex('data_exports')
      .where({ workspace_id: current.workspace_id })
      .where('sequence', '<', current.sequence)
      .whereNotNull('storage_path')
      .select('id', 'storage_bucket', 'storage_path')) as Array<{ id: string; storage_bucket: string; storage_path: string }>;
    for (const old of older) {
      if (isBucket(old.storage_bucket)) await storage.objects.remove(old.storage_bucket, [old.storage_path]);
      await knex('data_exports').where({ id: old.id }).update({ storage_bucket: null, storage_path: null, link_expires_at: knex.fn.now(), updated_at: knex.fn.now() });
    }
  }
}

export type DataExportActivities = ReturnType<typeof createDataExportActivities>;
