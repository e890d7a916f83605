/**
 * The invariants an operator (or the soak benchmark, after its run) checks across the whole installation, read-only
 * (DESIGN.md "Load, soak and scale-out": one invariant checker, runnable by operators; `npm run check`):
 *
 * - ledger: for every workspace (profile), balance = the sum of its ledger, reserved = the sum of its active
 *   reservations, neither negative, reserved within the balance;
 * - storage: every stored object of the five buckets has a row that claims it and every row's file is stored;
 * - workflows: no run is still open for a job whose row is finished;
 * - jobs: no job row is left pending or processing with no open run to finish it.
 *
 * The database is read in one repeatable-read snapshot, so rows written together (an approval and the content row it
 * creates) are seen together. What the snapshot cannot cover (storage and Temporal move on their own) is settled by
 * a grace window and a second look: objects younger than `graceMs` are not judged (an upload stores its file before
 * its row), rows finished or changed within it neither (a run closes a moment after its last activity wrote the row),
 * and each candidate is confirmed against storage, the database and Temporal before it is reported.
 *
 * What each row claims in storage follows the writers: an upload's claim (upload_intents) its object, thumbnail and
 * preview until the abandoned-upload sweep is overdue; content rows their file, thumbnail and (renders) preview
 * (services/content/storedFiles.ts; derived render copies as the hourly sweep, services/content/orphanedObjects.ts,
 * counts them); a pending item its original, watermarked preview and thumbnail; a finished export its zip; a draft
 * image its current file and its version history; a job still running (or just finished) the folder it writes in.
 * Tus upload parts are not in the buckets (their own `uploads` bucket, or STORAGE_DIR/.tus-uploads), and health or
 * probe objects (`_health/`, `_probe/` on S3) are nobody's rows: neither is judged.
 */
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { EXPORT_BUCKET, exportFolder } from '../../domain/accountData';
import { draftFolder, type DraftImageMetadata } from '../../domain/enhanceRenders';
import { BUCKETS, isBucket, parseFileUrl, type Bucket, type ObjectStorage } from '../../storage';
import { derivedRenderPaths } from '../content/orphanedObjects';
import { pathsClaimedByUploads } from '../content/uploadIntents';
import { storedFilesOf, type StoredFileRef } from '../content/storedFiles';

/** Objects this young, and rows finished or changed this recently, are not judged (see the header). */
export const INVARIANT_GRACE_MS = 2 * 60 * 1000;
const LOOKUP_BATCH = 500;

export interface InvariantReport {
  ok: boolean;
  ledger: { accountsChecked: number; violations: Array<{ workspaceId: string; problem: string }> };
  storage: { objectsChecked: number; rowsChecked: number; objectsWithoutRow: string[]; rowsWithoutObject: string[] };
  workflows: { checked: number; openForFinishedJobs: string[] };
  jobs: { nonTerminalStale: string[] };
  /** Checks not run: the workflow and job checks need Temporal. */
  skipped: string[];
  checkedAt: string;
  graceMs: number;
}

export interface InvariantDeps {
  knex: Knex;
  storage: ObjectStorage;
  /** Without it the workflow and job checks are skipped (and listed in `skipped`). */
  temporal?: Client;
}

export interface InvariantOptions {
  graceMs?: number;
  now?: number;
}

export async function checkInvariants(deps: InvariantDeps, options: InvariantOptions = {}): Promise<InvariantReport> {
  const graceMs = options.graceMs ?? INVARIANT_GRACE_MS;
  const now = options.now ?? Date.now();
  const cutoff = new Date(now - graceMs);
  // objects first, rows after: an object stored after the listing has no say, a row written after it is confirmed by stat
  const objects = await listStoredObjects(deps.storage, cutoff);
  const snapshot = await readSnapshot(deps.knex, cutoff);
  const storage = await storageAgreement(deps, objects, snapshot.claims, cutoff);
  const skipped: string[] = [];
  let workflows: InvariantReport['workflows'] = { checked: 0, openForFinishedJobs: [] };
  let jobs: InvariantReport['jobs'] = { nonTerminalStale: [] };
  if (deps.temporal) ({ workflows, jobs } = await workflowAgreement(deps.knex, deps.temporal, cutoff));
  else skipped.push('workflows', 'jobs');
  const ok =
    snapshot.ledger.violations.length === 0 &&
    storage.objectsWithoutRow.length === 0 &&
    storage.rowsWithoutObject.length === 0 &&
    workflows.openForFinishedJobs.length === 0 &&
    jobs.nonTerminalStale.length === 0;
  return { ok, ledger: snapshot.ledger, storage, workflows, jobs, skipped, checkedAt: new Date(now).toISOString(), graceMs };
}

// ---------------------------------------------------------------------------------------------------------------
// Ledger

interface LedgerRow {
  id: string;
  credits: number;
  reserved_credits: number;
  ledger_sum: string | number;
  active_sum: string | number;
}

/** One statement over every profile (services/billing/creditLedger/reporting.ts checks one account the same way). */
async function ledgerInvariant(db: Knex.Transaction): Promise<InvariantReport['ledger']> {
  const rows = (
    await db.raw(`
      select p.id, p.credits, p.reserved_credits, coalesce(t.total, 0) as ledger_sum, coalesce(r.total, 0) as active_sum
      from profiles p
      left join (select workspace_id, sum(amount) as total from credit_transactions group by workspace_id) t on t.workspace_id = p.id
      left join (select workspace_id, sum(amount) as total from credit_reservations where status = 'active' group by workspace_id) r on r.workspace_id = p.id
      order by p.id`)
  ).rows as LedgerRow[];
  const violations: Array<{ workspaceId: string; problem: string }> = [];
  for (const row of rows) {
    const ledgerSum = Number(row.ledger_sum);
    const activeSum = Number(row.active_sum);
    const problems: string[] = [];
    if (row.credits !== ledgerSum) problems.push(`balance ${row.credits} but the ledger sums to ${ledgerSum}`);
    if (row.reserved_credits !== activeSum) problems.push(`reserved ${row.reserved_credits} but active reservations sum to ${activeSum}`);
    if (row.credits < 0) problems.push(`balance ${row.credits} is negative`);
    if (row.reserved_credits < 0) problems.push(`reserved ${row.reserved_credits} is negative`);
    if (row.reserved_credits > row.credits) problems.push(`reserved ${row.reserved_credits} exceeds the balance ${row.credits}`);
    for (const problem of problems) violations.push({ workspaceId: row.id, problem });
  }
  return { accountsChecked: rows.length, violations };
}

// ---------------------------------------------------------------------------------------------------------------
// Storage

interface StorageClaims {
  /** `bucket/path` → the row that needs the file (`table id`). */
  required: Map<string, string>;
  /** Files some row refers to without needing them (a source URL, a result URL, a decided item's files). */
  claimed: Set<string>;
  /** Folders a running (or just finished) job writes in: everything under them is that job's. */
  folders: Array<{ bucket: Bucket; prefix: string }>;
}

const key = (ref: StoredFileRef): string => `${ref.bucket}/${ref.path}`;

function refOf(bucket: string | null, path: string | null): StoredFileRef | null {
  return bucket && path && isBucket(bucket) ? { bucket, path } : null;
}

async function readSnapshot(knex: Knex, cutoff: Date): Promise<{ ledger: InvariantReport['ledger']; claims: StorageClaims }> {
  return knex.transaction(
    async (trx) => {
      // whole-table reads: the app's per-query timeout is for requests, not for an operator's check
      await trx.raw('set local statement_timeout = 0');
      const ledger = await ledgerInvariant(trx);
      const claims = await storageClaims(trx, cutoff);
      return { ledger, claims };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** What the rows say about storage: the files they need, the files they merely name, the folders of running jobs. */
async function storageClaims(db: Knex | Knex.Transaction, cutoff: Date): Promise<StorageClaims> {
  const required = new Map<string, string>();
  const claimed = new Set<string>();
  const folders: StorageClaims['folders'] = [];
  const need = (ref: StoredFileRef | null, owner: string): void => {
    if (ref && !required.has(key(ref))) required.set(key(ref), owner);
  };
  const name = (ref: StoredFileRef | null): void => {
    if (ref) claimed.add(key(ref));
  };

  for (const table of ['renders', 'images', 'clips', 'compiled_videos', 'generated_content'] as const) {
    const columns = ['id', 'storage_bucket', 'storage_path', 'file_url'];
    if (table !== 'generated_content') columns.push('thumbnail_path');
    if (table === 'renders') columns.push('preview_path');
    if (table === 'clips') columns.push('thumbnail_url');
    const rows = (await db(table).select(columns)) as Array<Record<string, string | null>>;
    for (const row of rows) {
      const files = storedFilesOf({ storageBucket: row.storage_bucket, storagePath: row.storage_path, thumbnailPath: row.thumbnail_path, previewPath: row.preview_path, fileUrl: row.file_url });
      for (const ref of files) need(ref, `${table} ${row.id}`);
      if (table === 'renders' && files[0]) for (const path of derivedRenderPaths(files[0].path)) name({ bucket: files[0].bucket, path });
      if (row.thumbnail_url) name(parseFileUrl(row.thumbnail_url));
    }
  }

  // a music track needs its file (services/content/musicTracks.ts)
  const tracks = (await db('music_tracks').select('id', 'storage_bucket', 'storage_path')) as Array<{ id: string; storage_bucket: string; storage_path: string }>;
  for (const row of tracks) need(refOf(row.storage_bucket, row.storage_path), `music_tracks ${row.id}`);

  // an upload's claim on the object it stores (services/content/uploadIntents.ts): killed before its row, the object is
  // the abandoned-upload sweep's within minutes; past that, it is reported
  for (const ref of await pathsClaimedByUploads(db, cutoff)) name(ref);

  // a pending item needs its files; a decided one's go with its decision (approved: the original became a content
  // row above), which removes them just after it commits: named for the grace window, not needed
  const approvals = (await db('pending_approvals')
    .where({ status: 'pending' })
    .orWhere('decided_at', '>', cutoff)
    .select('id', 'status', 'original_bucket', 'original_path', 'watermarked_bucket', 'watermarked_path', 'thumbnail_path')) as Array<Record<string, string>>;
  for (const row of approvals) {
    const files = [refOf(row.original_bucket, row.original_path), refOf(row.watermarked_bucket, row.watermarked_path), refOf(row.original_bucket, row.thumbnail_path)];
    for (const ref of files) (row.status === 'pending' ? need(ref, `pending_approvals ${row.id}`) : name(ref));
  }

  const exports = (await db('data_exports').select('id', 'workspace_id', 'status', 'storage_bucket', 'storage_path', 'updated_at')) as Array<{
    id: string;
    workspace_id: string;
    status: string;
    storage_bucket: string | null;
    storage_path: string | null;
    updated_at: Date;
  }>;
  for (const row of exports) {
    if (row.status === 'completed') need(refOf(row.storage_bucket, row.storage_path), `data_exports ${row.id}`);
    if (isRunning(row.status) || row.updated_at > cutoff) folders.push({ bucket: EXPORT_BUCKET, prefix: `${exportFolder(row.workspace_id)}/${row.id}/` });
  }

  // a draft image needs its current file and every version of its history (services/generation/drafts.ts)
  const draftImages = (await db('draft_images').select('id', 'source_url', 'resolved_url', 'metadata')) as Array<{
    id: string;
    source_url: string | null;
    resolved_url: string | null;
    metadata: Partial<DraftImageMetadata> | null;
  }>;
  for (const row of draftImages) {
    const metadata = row.metadata ?? {};
    need(metadata.storage ? refOf(metadata.storage.bucket, metadata.storage.path) : null, `draft_images ${row.id}`);
    for (const version of metadata.history ?? []) need(version.storage ? refOf(version.storage.bucket, version.storage.path) : null, `draft_images ${row.id}`);
    for (const url of [row.source_url, row.resolved_url]) if (url) name(parseFileUrl(url));
  }
  const draftUploads = (await db('draft_uploads').whereNotNull('path').select('bucket', 'path')) as Array<{ bucket: string; path: string }>;
  for (const row of draftUploads) name(refOf(row.bucket, row.path));

  // jobs write their files before their rows: a running one (or one that just finished) owns its folder
  const draftJobs = (await db('draft_jobs').select('id', 'workspace_id', 'draft_id', 'draft_image_id', 'status', 'result_url', 'updated_at')) as Array<{
    id: string;
    workspace_id: string;
    draft_id: string;
    draft_image_id: string;
    status: string;
    result_url: string | null;
    updated_at: Date;
  }>;
  for (const row of draftJobs) {
    if (row.result_url) name(parseFileUrl(row.result_url));
    // activities/draftJob.ts: `<draft folder>/<image id>/v-<job id>.<ext>`
    if (isRunning(row.status) || row.updated_at > cutoff) folders.push({ bucket: 'drafts', prefix: `${draftFolder(row.workspace_id, row.draft_id)}/${row.draft_image_id}/v-${row.id}.` });
  }
  // activities/clipGeneration.ts and activities/assembly.ts: `<account id>/<job id>/` in clips and videos
  for (const [table, bucket] of [
    ['video_generation_jobs', 'clips'],
    ['assembly_jobs', 'videos'],
  ] as const) {
    const rows = (await db(table)
      .whereIn('status', ['pending', 'processing'])
      .orWhere('updated_at', '>', cutoff)
      .select('id', 'workspace_id')) as Array<{ id: string; workspace_id: string }>;
    for (const row of rows) folders.push({ bucket, prefix: `${row.workspace_id}/${row.id}/` });
  }
  return { required, claimed, folders };
}

function isRunning(status: string): boolean {
  return status === 'pending' || status === 'processing';
}

function isClaimed(claims: StorageClaims, ref: StoredFileRef): boolean {
  const k = key(ref);
  return claims.required.has(k) || claims.claimed.has(k) || claims.folders.some((f) => f.bucket === ref.bucket && ref.path.startsWith(f.prefix));
}

interface ListedObjects {
  /** `bucket/path` of every object older than the cutoff. */
  settled: StoredFileRef[];
  /** `bucket/path` of every object, whatever its age. */
  all: Set<string>;
}

async function listStoredObjects(storage: ObjectStorage, cutoff: Date): Promise<ListedObjects> {
  const settled: StoredFileRef[] = [];
  const all = new Set<string>();
  for (const bucket of BUCKETS) {
    for (const object of await storage.list(bucket, '')) {
      // S3 health and probe objects (storage/s3ObjectStorage.ts); the local backend keeps its own outside the buckets
      if (object.path.startsWith('_')) continue;
      all.add(`${bucket}/${object.path}`);
      if (object.modifiedAt < cutoff) settled.push({ bucket, path: object.path });
    }
  }
  return { settled, all };
}

async function storageAgreement(deps: InvariantDeps, objects: ListedObjects, claims: StorageClaims, cutoff: Date): Promise<InvariantReport['storage']> {
  const unclaimed = objects.settled.filter((ref) => !isClaimed(claims, ref));
  const missing = [...claims.required].filter(([k]) => !objects.all.has(k));
  let objectsWithoutRow: string[] = [];
  let rowsWithoutObject: string[] = [];
  if (unclaimed.length > 0 || missing.length > 0) {
    // a second look: rows as they are now, objects as they are now (a file stored or removed after the first look)
    const now = await deps.knex.transaction((trx) => storageClaims(trx, cutoff), { isolationLevel: 'repeatable read', readOnly: true });
    for (const ref of unclaimed) if (!isClaimed(now, ref) && (await deps.storage.stat(ref.bucket, ref.path)) !== null) objectsWithoutRow.push(key(ref));
    for (const [k, owner] of missing) {
      const slash = k.indexOf('/');
      const ref = { bucket: k.slice(0, slash) as Bucket, path: k.slice(slash + 1) };
      if (now.required.has(k) && (await deps.storage.stat(ref.bucket, ref.path)) === null) rowsWithoutObject.push(`${k} (${owner})`);
    }
    objectsWithoutRow = objectsWithoutRow.sort();
    rowsWithoutObject = rowsWithoutObject.sort();
  }
  return { objectsChecked: objects.settled.length, rowsChecked: claims.required.size, objectsWithoutRow, rowsWithoutObject };
}

// ---------------------------------------------------------------------------------------------------------------
// Workflows and jobs

/** The tables whose rows a run finishes, how an unfinished row reads, and since when a row has been as it is. */
const JOB_TABLES = [
  { table: 'video_generation_jobs', running: ['pending', 'processing'], since: 'updated_at' },
  { table: 'assembly_jobs', running: ['pending', 'processing'], since: 'updated_at' },
  { table: 'draft_jobs', running: ['pending', 'processing'], since: 'updated_at' },
  { table: 'data_exports', running: ['pending', 'processing'], since: 'updated_at' },
  { table: 'pending_approvals', running: ['pending'], since: 'coalesce(decided_at, created_at)' },
  // written pending when the run starts (before that, only when it ended), kept current by the run
  { table: 'ai_image_edits', running: ['pending', 'processing'], since: 'updated_at' },
] as const;

interface JobRow {
  id: string;
  workflow_id: string;
  status: string;
  since: Date;
}

async function isRunOpen(client: Client, workflowId: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') return false;
    throw err;
  }
}

async function workflowAgreement(knex: Knex, client: Client, cutoff: Date): Promise<Pick<InvariantReport, 'workflows' | 'jobs'>> {
  // every open run by visibility (eventually consistent: each finding is confirmed by describing the run)
  const open = new Set<string>();
  for await (const run of client.workflow.list({ query: `ExecutionStatus = 'Running'` })) open.add(run.workflowId);

  const openForFinishedJobs: string[] = [];
  const openIds = [...open];
  for (const { table, running, since } of JOB_TABLES) {
    for (let i = 0; i < openIds.length; i += LOOKUP_BATCH) {
      const rows = (await knex(table)
        .whereIn('workflow_id', openIds.slice(i, i + LOOKUP_BATCH))
        .select('id', 'workflow_id', 'status', knex.raw(`${since} as since`))) as JobRow[];
      for (const row of rows) {
        if ((running as readonly string[]).includes(row.status) || row.since > cutoff) continue;
        if (await isRunOpen(client, row.workflow_id)) openForFinishedJobs.push(`${row.workflow_id} (${table} ${row.id} is ${row.status} since ${row.since.toISOString()})`);
      }
    }
  }

  const nonTerminalStale: string[] = [];
  for (const { table, running, since } of JOB_TABLES) {
    const rows = (await knex(table)
      .whereIn('status', running as readonly string[])
      .whereRaw(`${since} < ?`, [cutoff])
      .whereNotNull('workflow_id')
      .select('id', 'workflow_id', 'status', knex.raw(`${since} as since`))) as JobRow[];
    for (const row of rows) {
      if (open.has(row.workflow_id) || (await isRunOpen(client, row.workflow_id))) continue;
      // the run may have finished the row and closed since the read
      const now = (await knex(table).where({ id: row.id }).first('status')) as { status: string } | undefined;
      if (!now || !(running as readonly string[]).includes(now.status)) continue;
      nonTerminalStale.push(`${table} ${row.id} (${row.status} since ${row.since.toISOString()}, run ${row.workflow_id} not open)`);
    }
  }
  return { workflows: { checked: open.size, openForFinishedJobs: openForFinishedJobs.sort() }, jobs: { nonTerminalStale: nonTerminalStale.sort() } };
}
