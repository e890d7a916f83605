import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { ACCOUNT_DATA_MESSAGES, accountDeletionWorkflowId, type DataExportView } from '../../domain/accountData';
import { CLIP_PROGRESS } from '../../domain/clipGeneration';
import { logger } from '../../config/logger';
import { AccountDataService } from '../../services/accounts/accountData';
import { accountDeletionWorkflow, approvalWorkflow, type AccountDeletionResult } from '../../workflows';
import { createProviders } from '../../providers';
import { clipTestConfig, clipUser, startClip, startClipWorker, waitForJob, renderJpeg, type ClipUser, type RunningWorker } from '../clips/fixtures';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { holdRenders, type HeldRenders } from '../support/heldRenders';
import { request } from '../support/http';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { shortHeartbeatBundle } from '../support/workflowBundles';
import { rowsMentioning, startAccountDataApp, storagePathsContaining, waitForExport, type AccountDataApp } from './support/accountDataApp';

const ROOT = path.resolve(__dirname, '..', '..');

let client: Client;
let closeClient: () => Promise<void>;

beforeAll(async () => {
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  await closeClient?.();
  await closeTestKnex();
});

/** A user with a render, a pending item (stored files, 1 credit reserved, its approval workflow waiting), and an export. */
async function userWithData(app: AccountDataApp, width: number, extraCredits = 0): Promise<ClipUser & { approvalId: string }> {
  const user = await clipUser(app.baseUrl, { image: await renderJpeg(width, Math.round((width * 9) / 16)), extraCredits });
  const { id } = await insertPendingApproval(testKnex(), { userId: user.id, projectId: user.projectId, cost: 1, reserve: true });
  await app.storage.objects.put('images', `pending/${id}/original`, await renderJpeg(width - 100, 360));
  await app.storage.objects.put('images', `pending/${id}/preview`, await renderJpeg(320, 180));
  await client.workflow.start(approvalWorkflow, {
    workflowId: `approval-${id}`,
    taskQueue: app.taskQueue,
    args: [{ approvalId: id, workspaceId: user.id, windowMs: 86_400_000 }],
  });
  const started = await request<{ export: DataExportView }>(app.baseUrl, '/api/account/exports', { token: user.token, json: {} });
  expect(started.status).toBe(202);
  return { ...user, approvalId: id };
}

async function deleteAccount(app: AccountDataApp, user: { token: string }, confirmEmail: unknown) {
  return request<{ success: boolean; status?: string; workflowId?: string; error?: string; code?: string }>(app.baseUrl, '/api/account/delete', {
    token: user.token,
    json: confirmEmail === undefined ? {} : { confirmEmail },
  });
}

/** Nothing of the user is left: no row names its id or e-mail, no stored file its id or its items' ids. */
async function expectNothingLeft(app: AccountDataApp, user: ClipUser & { approvalId: string }): Promise<void> {
  expect(await rowsMentioning(testKnex(), [user.id, user.email, user.projectId, user.approvalId])).toEqual([]);
  expect(await storagePathsContaining(user.id)).toEqual([]);
  expect(await storagePathsContaining(user.approvalId)).toEqual([]);
}

/** The other user's data, to check it is untouched. */
async function snapshot(app: AccountDataApp, user: ClipUser & { approvalId: string }) {
  const knex = testKnex();
  return {
    profile: await knex('profiles').where({ id: user.id }).first('credits', 'reserved_credits'),
    renders: await knex('renders').where({ workspace_id: user.id }).count<{ count: string }[]>({ count: '*' }),
    approvals: await knex('pending_approvals').where({ workspace_id: user.id }).select('id', 'status'),
    ledger: await knex('credit_transactions').where({ workspace_id: user.id }).count<{ count: string }[]>({ count: '*' }),
    files: (await storagePathsContaining(user.id)).sort(),
    pendingFiles: (await storagePathsContaining(user.approvalId)).sort(),
  };
}

describe('account deletion (POST /api/account/delete, workflow account-deletion-<userId>)', () => {
  let app: AccountDataApp;
  let worker: RunningWorker;
  let renders: HeldRenders;

  beforeAll(async () => {
    app = await startAccountDataApp();
    // a clip's render is held once it has finished, before its activity stores it (tests/support/heldRenders.ts): the
    // clip is still running when the account is deleted, however fast the encode; nothing here releases it
    const config = clipTestConfig();
    const providers = createProviders(config, { videoPreset: config.videoPreset });
    renders = holdRenders(providers.imageToVideo);
    worker = await startClipWorker(app.taskQueue, { config, providers: { ...providers, imageToVideo: renders.provider } });
  });

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
  });

  it('refuses a confirmation that is not the account e-mail (400, clear message) and changes nothing', async () => {
    const user = await clipUser(app.baseUrl);
    const wrong = await deleteAccount(app, user, 'someone@example.test');
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ success: false, error: ACCOUNT_DATA_MESSAGES.confirmEmailMismatch, code: 'CONFIRM_EMAIL_MISMATCH' });
    const missing = await deleteAccount(app, user, undefined);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ success: false, error: ACCOUNT_DATA_MESSAGES.confirmEmailRequired });
    const blank = await deleteAccount(app, user, '   ');
    expect(blank.status).toBe(400);
    expect(blank.body).toMatchObject({ error: ACCOUNT_DATA_MESSAGES.confirmEmailRequired });
    const notText = await deleteAccount(app, user, 42);
    expect(notText.status).toBe(400);
    expect(notText.body).toMatchObject({ error: 'confirmEmail must be a string' });
    expect((await request(app.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(200);
    expect(await testKnex()('users').where({ id: user.id }).first('deletion_requested_at')).toEqual({ deletion_requested_at: null });
    await expect(client.workflow.getHandle(accountDeletionWorkflowId(user.id)).describe()).rejects.toThrow();
  });

  it('cancels a running clip, ends pending items, removes every file and row, signs the user out; others untouched; the e-mail signs up afresh', async () => {
    // bought credits: the clip's 4 on top of the pending item's 1 (the two users are set up at once)
    const [user, other] = await Promise.all([userWithData(app, 960, 10), userWithData(app, 1024)]);
    await Promise.all([waitForExport(app.baseUrl, user), waitForExport(app.baseUrl, other)]);

    const started = await startClip(app.baseUrl, user, { movement: 'Pan Left', platform: 'YouTube' });
    expect(started.body).toEqual({ success: true, jobId: expect.any(String) });
    const jobId = started.body.jobId as string;
    // until its render has run and is held in the clip's render step; stops at a final state too: a clip that ended
    // before the deletion (a failed render) fails here with its reason, instead of waiting into the test's timeout
    const { job } = await waitForJob(app.baseUrl, user, jobId, {
      intervalMs: 200,
      timeoutMs: 120_000,
      until: (j) => (j.status === 'processing' && renders.held.size > 0) || ['completed', 'failed', 'cancelled'].includes(j.status),
    });
    if (job.status !== 'processing') throw new Error(`the clip ended before the deletion: ${JSON.stringify(job)}`);
    // the held render is this clip's, and the clip is in its render step (past its submission, not stored)
    const { provider_job_id: providerJobId } = (await testKnex()('video_generation_jobs').where({ id: jobId }).first('provider_job_id')) as { provider_job_id: string };
    expect([...renders.held]).toEqual([providerJobId]);
    expect(job.progress).toBeGreaterThanOrEqual(CLIP_PROGRESS.renderStart);
    expect(job.progress).toBeLessThanOrEqual(CLIP_PROGRESS.renderEnd);
    // the running clip holds its 4 credits, the pending item its 1
    expect(await testKnex()('profiles').where({ id: user.id }).first('reserved_credits')).toEqual({ reserved_credits: 5 });
    const before = await snapshot(app, other);

    // confirmed with the e-mail as typed, case and spaces aside
    const res = await deleteAccount(app, user, `  ${user.email.toUpperCase()} `);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ success: true, workflowId: `account-deletion-${user.id}` });
    expect(['deleted', 'deleting']).toContain(res.body.status);
    expect(res.headers.get('set-cookie')).toMatch(/rs_session=;/);
    // signed out at once
    expect((await request(app.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(401);

    const result: AccountDeletionResult = await client.workflow.getHandle(accountDeletionWorkflowId(user.id)).result();
    expect(result).toMatchObject({ deletedUser: true, endedApprovals: 1 });
    expect(result.cancelledWorkflows).toBeGreaterThanOrEqual(1);
    expect(result.removedFiles).toBeGreaterThanOrEqual(5);

    // the clip run was cancelled, and its own clean-up ran (release of its reservation, removal of its files)
    const clip = await client.workflow.getHandle(`clip-${jobId}`).describe();
    expect(clip.status.name).toBe('CANCELLED');
    const history = await client.workflow.getHandle(`clip-${jobId}`).fetchHistory();
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'abandonClipJob');
    expect(scheduled).toHaveLength(1);
    expect((await client.workflow.getHandle(`approval-${user.approvalId}`).describe()).status.name).toBe('TERMINATED');
    expect((await client.workflow.getHandle(`approval-${other.approvalId}`).describe()).status.name).toBe('RUNNING');

    await expectNothingLeft(app, user);
    expect(await snapshot(app, other)).toEqual(before);
    // a render, its thumbnail and an export zip under the user's id; the pending item's original and preview
    expect(before.files.length).toBeGreaterThanOrEqual(3);
    expect(before.pendingFiles.length).toBeGreaterThanOrEqual(2);

    // no sign-in, then a fresh account under the same e-mail with the 5 starting credits
    const signIn = await request(app.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    expect(signIn.status).toBe(401);
    const again = await request<{ user: { id: string }; token: string }>(app.baseUrl, '/api/auth/signup', { json: { name: 'Back Again', email: user.email, password: user.password } });
    expect(again.status).toBe(201);
    expect(again.body.user.id).not.toBe(user.id);
    expect(await testKnex()('profiles').where({ id: again.body.user.id }).first('credits', 'reserved_credits')).toEqual({ credits: 5, reserved_credits: 0 });
    expect(await testKnex()('projects').where({ workspace_id: again.body.user.id })).toEqual([]);
    expect(await testKnex()('credit_transactions').where({ workspace_id: again.body.user.id }).pluck('transaction_type')).toEqual(['signup_bonus']);
    const exports = await request<{ export: unknown }>(app.baseUrl, '/api/account/exports', { token: again.body.token });
    expect(exports.body.export).toBeNull();
  }, 180_000);

  it('a second request joins the running deletion, and a run after the end changes nothing', async () => {
    const [user, other] = await Promise.all([userWithData(app, 880), userWithData(app, 900)]);
    await Promise.all([waitForExport(app.baseUrl, user), waitForExport(app.baseUrl, other)]);
    const before = await snapshot(app, other);
    const service = new AccountDataService({
      knex: testKnex(),
      storage: app.storage,
      client: async () => client,
      taskQueue: app.taskQueue,
      logger,
      deletionWaitMs: 0,
    });
    const [a, b] = await Promise.all([service.requestDeletion(user.id, user.email), service.requestDeletion(user.id, user.email)]);
    expect(a.workflowId).toBe(b.workflowId);
    const handle = client.workflow.getHandle(accountDeletionWorkflowId(user.id));
    const first = await handle.describe();
    const result: AccountDeletionResult = await handle.result();
    expect(result.deletedUser).toBe(true);
    // both requests were one run
    expect((await handle.describe()).runId).toBe(first.runId);

    const rerun = await client.workflow.execute(accountDeletionWorkflow, {
      workflowId: accountDeletionWorkflowId(user.id),
      taskQueue: app.taskQueue,
      args: [{ userId: user.id }],
    });
    expect(rerun).toEqual({ cancelledWorkflows: 0, endedApprovals: 0, removedFiles: 0, deletedUser: false });
    await expectNothingLeft(app, user);
    expect(await snapshot(app, other)).toEqual(before);
  }, 120_000);
});

interface ChildWorker {
  child: ChildProcess;
  output: () => string;
}

/**
 * A worker process on `taskQueue`, running the app's workflows with short heartbeat timeouts
 * (tests/support/workflowBundles.ts): the killed worker's removeUserFiles attempt is given up, and retried on the next
 * worker, after that timeout instead of the workflow's 20 s. Every worker of the test runs the same bundle.
 */
async function spawnWorker(taskQueue: string, env: Record<string, string> = {}): Promise<ChildWorker> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tests/accountData/support/accountDataWorker.ts')], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ACCOUNT_DATA_WORKER_QUEUE: taskQueue,
      LOG_LEVEL: 'silent',
      TEMPORAL_LOG_LEVEL: 'ERROR',
      TEST_WORKFLOW_BUNDLE_PATH: await shortHeartbeatBundle(),
      ...env,
    },
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await waitForOutput({ child, output: () => out }, 'account data worker ready', 60_000);
  return { child, output: () => out };
}

function waitForOutput(worker: ChildWorker, text: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (worker.output().includes(text)) {
        clearInterval(timer);
        clearTimeout(deadline);
        resolve();
      } else if (worker.child.exitCode !== null) {
        clearInterval(timer);
        clearTimeout(deadline);
        reject(new Error(`worker exited with ${worker.child.exitCode}: ${worker.output()}`));
      }
    }, 50);
    const deadline = setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`no "${text}" from the worker within ${timeoutMs} ms: ${worker.output()}`));
    }, timeoutMs);
  });
}

function killGroup(worker: ChildWorker, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resolve();
    worker.child.once('exit', () => resolve());
    process.kill(-(worker.child.pid as number), signal);
  });
}

describe('account deletion across a worker crash (SIGKILL mid-way, then a new worker)', () => {
  let app: AccountDataApp;
  const workers: ChildWorker[] = [];

  beforeAll(async () => {
    app = await startAccountDataApp(uniqueTaskQueue('deletion-crash'));
  });

  afterAll(async () => {
    for (const worker of workers.splice(0)) await killGroup(worker, 'SIGKILL');
    await app?.close();
  });

  it('finishes after the crash; the step that died after its work is run again and finds nothing to do', async () => {
    // this worker runs the exports, then the deletion up to the removal of the files, and dies before it can say so
    // (the stall is only in removeUserFiles, which nothing but the deletion runs)
    const stalling = await spawnWorker(app.taskQueue, { STALL_AFTER: 'removeUserFiles' });
    workers.push(stalling);
    const [user, other] = await Promise.all([userWithData(app, 840), userWithData(app, 860)]);
    await Promise.all([waitForExport(app.baseUrl, user), waitForExport(app.baseUrl, other)]);
    const before = await snapshot(app, other);

    const res = await deleteAccount(app, user, user.email);
    expect(res.status).toBe(202);
    await waitForOutput(stalling, 'stalled after removeUserFiles', 60_000);
    await killGroup(stalling, 'SIGKILL');

    // mid-way: signed out, files gone, rows still there
    expect((await request(app.baseUrl, '/api/auth/me', { token: user.token })).status).toBe(401);
    expect(await storagePathsContaining(user.id)).toEqual([]);
    expect(await testKnex()('users').where({ id: user.id }).first('deletion_requested_at')).toMatchObject({ deletion_requested_at: expect.any(Date) });
    const signIn = await request(app.baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
    expect(signIn.status).toBe(401);

    workers.push(await spawnWorker(app.taskQueue));
    const handle = client.workflow.getHandle(accountDeletionWorkflowId(user.id));
    const result: AccountDeletionResult = await handle.result();
    expect(result.deletedUser).toBe(true);

    // the file step ran twice (the second attempt after the heartbeat timeout), the row step once
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const scheduledId = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'removeUserFiles')?.eventId?.toString();
    const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduledId);
    expect(Number(started?.activityTaskStartedEventAttributes?.attempt)).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deleteUserRows')).toHaveLength(1);

    await expectNothingLeft(app, user);
    expect(await snapshot(app, other)).toEqual(before);
  }, 180_000);
});
