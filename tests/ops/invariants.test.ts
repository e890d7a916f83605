/**
 * The invariant checker (services/platform/invariants.ts, `npm run check`) on a database and storage of this file's
 * own: a consistent installation passes, and each kind of violation, made by hand behind the services' backs, is
 * reported as exactly that violation. Temporal is the run's dev server; runs on a task queue no worker polls stay open.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { clipWorkflowId } from '../../domain/workflowContracts/clipGeneration';
import { checkCommand, type CheckTarget } from '../../scripts/check';
import { reserveCredits } from '../../services/billing/credits';
import { checkInvariants, type InvariantReport } from '../../services/platform/invariants';
import { createStorage, LocalDiskStorage, type Bucket, type ObjectStorage } from '../../storage';
import { createFundedProfile, insertPendingApproval } from '../support/credits';
import { runS3Server, s3ConfigFor } from '../support/objectStorage';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';
import { testClient, uniqueTaskQueue } from '../support/temporal';

let db: ScratchDatabase;
let storage: ObjectStorage;
let storageDir: string | null = null;
let temporal: { client: Client; close: () => Promise<void> };
let workspaceId: string;
let renderPath: string;
let thumbPath: string;
let clipJobId: string;
let clipWorkflow: string;
let approvalWorkflow: string;

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);

/** Everything old enough to be judged: the grace window is for a live system, these rows and objects are settled. */
function check(options: { graceMs?: number } = {}): Promise<InvariantReport> {
  return checkInvariants({ knex: db.knex, storage, temporal: temporal.client }, { graceMs: options.graceMs ?? 0 });
}

/** Only what each test made wrong: every list of the report, empty or not. */
function problems(report: InvariantReport): Record<string, unknown[]> {
  return {
    ledger: report.ledger.violations,
    objectsWithoutRow: report.storage.objectsWithoutRow,
    rowsWithoutObject: report.storage.rowsWithoutObject,
    openForFinishedJobs: report.workflows.openForFinishedJobs,
    nonTerminalStale: report.jobs.nonTerminalStale,
  };
}

const NONE = { ledger: [], objectsWithoutRow: [], rowsWithoutObject: [], openForFinishedJobs: [], nonTerminalStale: [] };

async function put(bucket: Bucket, objectPath: string): Promise<void> {
  await storage.put(bucket, objectPath, JPEG);
}

beforeAll(async () => {
  db = await createScratchDatabase('invariants', { migrated: true });
  await db.knex.migrate.latest();
  const s3 = runS3Server();
  if (s3) storage = createStorage({ storageDir: '', signingSecret: 'x'.repeat(32), signedUrlTtlSeconds: 60, storageBackend: 's3', s3: s3ConfigFor(s3, 'inv') }).objects;
  else {
    storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-invariants-'));
    storage = new LocalDiskStorage(storageDir);
  }
  temporal = await testClient();

  // a consistent installation: a funded workspace with a held reservation for a pending item whose files are stored,
  // a render with its file and thumbnail, a clip job still processing under an open run with its file in its folder
  const profile = await createFundedProfile(db.knex, 10);
  workspaceId = profile.id;
  const approval = await insertPendingApproval(db.knex, { userId: workspaceId, contentType: 'image', cost: 1, reserve: true });
  approvalWorkflow = `approval-${approval.id}`;
  await temporal.client.workflow.start('approvalWorkflow', { taskQueue: uniqueTaskQueue('invariants-no-worker'), workflowId: approvalWorkflow, args: [] });
  await put('images', `pending/${approval.id}/original`);
  await put('images', `pending/${approval.id}/preview`);
  const renderId = randomUUID();
  renderPath = `${workspaceId}/${renderId}.jpg`;
  thumbPath = `thumbs/${workspaceId}/${renderId}.webp`;
  await put('renders', renderPath);
  await put('renders', thumbPath);
  await db.knex('renders').insert({
    id: renderId,
    project_id: approval.projectId,
    workspace_id: workspaceId,
    file_url: `/api/files/renders/${renderPath}`,
    file_name: 'house.jpg',
    storage_bucket: 'renders',
    storage_path: renderPath,
    thumbnail_path: thumbPath,
  });
  clipJobId = randomUUID();
  clipWorkflow = clipWorkflowId(clipJobId);
  await temporal.client.workflow.start('clipGenerationWorkflow', { taskQueue: uniqueTaskQueue('invariants-no-worker'), workflowId: clipWorkflow, args: [] });
  await db.knex('video_generation_jobs').insert({ id: clipJobId, workspace_id: workspaceId, project_id: approval.projectId, status: 'processing', workflow_id: clipWorkflow });
  await put('clips', `${workspaceId}/${clipJobId}/clip.mp4`);
}, 120_000);

afterAll(async () => {
  for (const workflowId of [clipWorkflow, approvalWorkflow]) {
    if (workflowId) await temporal?.client.workflow.getHandle(workflowId).terminate('test over').catch(() => undefined);
  }
  await temporal?.close();
  await db?.drop();
  if (storageDir) fs.rmSync(storageDir, { recursive: true, force: true });
});

describe('checkInvariants', () => {
  it('passes a consistent installation, having looked at every part', async () => {
    const report = await check();
    expect(problems(report)).toEqual(NONE);
    expect(report.ok).toBe(true);
    expect(report.skipped).toEqual([]);
    expect(report.ledger.accountsChecked).toBe(1);
    // the render, its thumbnail, the pending item's two files, the clip in its job's folder
    expect(report.storage.objectsChecked).toBe(5);
    expect(report.storage.rowsChecked).toBe(4);
    expect(report.workflows.checked).toBeGreaterThanOrEqual(1);
  });

  it('finds a balance that is not the sum of its ledger', async () => {
    await db.knex('profiles').where({ id: workspaceId }).increment('credits', 5);
    try {
      const report = await check();
      expect(report.ok).toBe(false);
      expect(problems(report)).toEqual({ ...NONE, ledger: [{ workspaceId, problem: 'balance 15 but the ledger sums to 10' }] });
    } finally {
      await db.knex('profiles').where({ id: workspaceId }).decrement('credits', 5);
    }
  });

  it('finds reserved credits that are not the sum of the active reservations', async () => {
    const extra = await reserveCredits(db.knex, { workspaceId, contentType: 'image', amount: 2, idempotencyKey: `extra:${randomUUID()}` });
    // released behind the ledger's back: the reservation row says so, reserved_credits still holds it
    await db.knex('credit_reservations').where({ id: extra.id }).update({ status: 'released' });
    try {
      const report = await check();
      expect(problems(report)).toEqual({ ...NONE, ledger: [{ workspaceId, problem: 'reserved 3 but active reservations sum to 1' }] });
    } finally {
      await db.knex('profiles').where({ id: workspaceId }).decrement('reserved_credits', 2);
    }
    expect((await check()).ok).toBe(true);
  });

  it('finds a stored object no row claims, once it is older than the grace window', async () => {
    const orphan = `${workspaceId}/${randomUUID()}.jpg`;
    await put('renders', orphan);
    try {
      // just stored: an upload in flight, whose row comes next
      expect(problems(await check({ graceMs: 10 * 60_000 }))).toEqual(NONE);
      const report = await check();
      expect(problems(report)).toEqual({ ...NONE, objectsWithoutRow: [`renders/${orphan}`] });
    } finally {
      await storage.remove('renders', [orphan]);
    }
  });

  it('finds a row whose file is gone', async () => {
    await storage.remove('renders', [thumbPath]);
    try {
      const report = await check();
      expect(report.storage.rowsWithoutObject).toEqual([expect.stringMatching(new RegExp(`^renders/${thumbPath} \\(renders [0-9a-f-]{36}\\)$`))]);
      expect(problems(report)).toEqual({ ...NONE, rowsWithoutObject: report.storage.rowsWithoutObject });
    } finally {
      await put('renders', thumbPath);
    }
  });

  it('finds a run still open for a job whose row is finished', async () => {
    await db.knex('video_generation_jobs').where({ id: clipJobId }).update({ status: 'completed' });
    try {
      const report = await check();
      expect(problems(report)).toEqual({
        ...NONE,
        openForFinishedJobs: [expect.stringContaining(`${clipWorkflow} (video_generation_jobs ${clipJobId} is completed since`)],
        // a finished job no longer owns its folder: its files are its pending item's, and here it made none
        objectsWithoutRow: [`clips/${workspaceId}/${clipJobId}/clip.mp4`],
      });
      // within the grace window the run may just be closing
      expect(problems(await check({ graceMs: 10 * 60_000 }))).toEqual(NONE);
    } finally {
      await db.knex('video_generation_jobs').where({ id: clipJobId }).update({ status: 'processing' });
    }
  });

  it('finds a job left pending with no open run', async () => {
    const unfinished = randomUUID();
    const project = (await db.knex('projects').where({ workspace_id: workspaceId }).first('id')) as { id: string };
    // left a minute ago: stamped by PostgreSQL's clock in microseconds, a row made just now can read as later than
    // the check's cutoff (Date.now(), in milliseconds) even with no grace window
    const minuteAgo = new Date(Date.now() - 60_000);
    await db.knex('video_generation_jobs').insert({ id: unfinished, workspace_id: workspaceId, project_id: project.id, status: 'pending', workflow_id: clipWorkflowId(unfinished), created_at: minuteAgo, updated_at: minuteAgo });
    try {
      const report = await check();
      expect(problems(report)).toEqual({ ...NONE, nonTerminalStale: [expect.stringMatching(new RegExp(`^video_generation_jobs ${unfinished} \\(pending since .*, run ${clipWorkflowId(unfinished)} not open\\)$`))] });
    } finally {
      await db.knex('video_generation_jobs').where({ id: unfinished }).update({ status: 'failed' });
    }
    expect((await check()).ok).toBe(true);
  });

  it('lists the workflow and job checks as skipped without Temporal', async () => {
    const report = await checkInvariants({ knex: db.knex, storage }, { graceMs: 0 });
    expect(report.skipped).toEqual(['workflows', 'jobs']);
    expect(report.ok).toBe(true);
  });
});

describe('npm run check', () => {
  const target = (): Promise<CheckTarget> => Promise.resolve({ knex: db.knex, storage, temporal: temporal.client, close: async () => undefined });

  it('prints a readable report and exits 0 when every invariant holds, 1 with the problem listed when one does not', async () => {
    const fine = await checkCommand(['--grace-seconds', '0'], target);
    expect(fine.code).toBe(0);
    expect(fine.stdout).toContain('OK: every invariant holds.');
    expect(fine.stdout).toContain('Ledger, 1 workspaces: balance = ledger sum');

    await db.knex('profiles').where({ id: workspaceId }).increment('credits', 1);
    try {
      const broken = await checkCommand(['--grace-seconds', '0'], target);
      expect(broken.code).toBe(1);
      expect(broken.stdout).toContain(`    - ${workspaceId}: balance 11 but the ledger sums to 10`);
      expect(broken.stdout).toContain('NOT OK: 1 problem.');
      const json = await checkCommand(['--json', '--grace-seconds', '0'], target);
      expect(json.code).toBe(1);
      expect((JSON.parse(json.stdout) as InvariantReport).ledger.violations).toEqual([{ workspaceId, problem: 'balance 11 but the ledger sums to 10' }]);
    } finally {
      await db.knex('profiles').where({ id: workspaceId }).decrement('credits', 1);
    }
  });

  it('refuses unknown arguments with its usage and exit status 2, before opening anything', async () => {
    const opened = jest.fn(target);
    const result = await checkCommand(['--grace-seconds', 'soon'], opened);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--grace-seconds takes a whole number of seconds');
    expect(result.stderr).toContain('Usage: npm run check');
    expect(opened).not.toHaveBeenCalled();
  });
});
