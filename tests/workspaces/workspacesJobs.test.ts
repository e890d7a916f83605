/**
 * Running jobs when people or workspaces go (issue 27, item 5), on a hosted provider whose jobs run until cancelled:
 * - removing a member cancels the clip they started in the team workspace (the provider's job too); the job reads
 *   cancelled and its 4 reserved credits go back to the workspace's balance, with the ledger invariant intact;
 * - deleting a team workspace cancels its running clip before its rows and files go.
 * Real API, Temporal worker, PostgreSQL and storage, as the clip tests run them.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createProviders } from '../../providers';
import { createStorage } from '../../storage';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { addCredits } from '../../services/billing/credits';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { createTeamWorkspace, inWorkspace, joinWorkspace } from '../support/workspaces';
import { clipTestConfig, creditState, expectLedgerOk, renderJpeg, startClipApp, startClipWorker, type ClipTestApp, type RunningWorker } from '../clips/fixtures';

const KEY = 'members-jobs-key';
const SLOW_MODEL = 'fake/video-slow';

/** A team workspace with 20 credits, a member, and a render in a project of the workspace uploaded by `uploader`. */
async function teamWithRender(app: ClipTestApp) {
  const knex = testKnex();
  const team = await createTeamWorkspace(app.baseUrl, { name: 'Clip Crew' });
  await addCredits(knex, { workspaceId: team.id, amount: 20, type: 'purchase', description: 'Team purchase', idempotencyKey: `team-purchase:${randomUUID()}` });
  const member = await joinWorkspace(app.baseUrl, team, 'member');
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: member.token, json: { name: 'Quay' }, headers: inWorkspace(team.id) });
  expect(project.status).toBe(201);
  const projectId = project.body.project.id;
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('file', new Blob([new Uint8Array(await renderJpeg())], { type: 'image/jpeg' }), 'quay.jpg');
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: member.token, headers: inWorkspace(team.id) });
  expect([200, 201]).toContain(upload.status);
  return { team, member, projectId, render: upload.body.render.data };
}

async function startTeamClip(app: ClipTestApp, user: { id: string; token: string }, workspaceId: string, projectId: string, render: { id: string; file_url: string }): Promise<string> {
  const start = await request<{ success: boolean; jobId: string }>(app.baseUrl, '/api/video-generation/start', {
    token: user.token,
    headers: inWorkspace(workspaceId),
    json: {
      options: { imageUrl: render.file_url, movement: 'Zoom In', originalPrompt: 'Boats at the quay', duration: 5, platform: 'YouTube' },
      context: { projectId, userId: user.id, renderId: render.id, isTemporaryImage: false },
    },
  });
  expect(start.status).toBe(200);
  return start.body.jobId;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

describe('running jobs when members or workspaces go', () => {
  let app: ClipTestApp;
  let worker: RunningWorker;
  let fal: FakeFal;
  let workDir: string;

  beforeAll(async () => {
    fal = await startFakeFal({ apiKey: KEY, models: { [SLOW_MODEL]: { kind: 'video', behaviour: 'never-complete', queuedPolls: 1 } } });
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'members-jobs-'));
    app = await startClipApp();
    const config = clipTestConfig({ providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falVideoModel: SLOW_MODEL });
    worker = await startClipWorker(app.taskQueue, { config, providers: createProviders(config, { workDir, videoPollIntervalMs: 100, expectedVideoRunMs: 60_000 }) });
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await fal?.close();
    await fs.rm(workDir, { recursive: true, force: true });
    await closeTemporalClient();
    await closeTestKnex();
  });

  it("a removed member's running clip is cancelled, and its reservation goes back to the workspace", async () => {
    const knex = testKnex();
    const { team, member, projectId, render } = await teamWithRender(app);
    const jobId = await startTeamClip(app, member, team.id, projectId, render);
    const job = await knex('video_generation_jobs').where({ id: jobId }).first('workspace_id', 'created_by', 'status', 'workflow_id');
    expect(job).toMatchObject({ workspace_id: team.id, created_by: member.id });
    // running at the provider, 4 credits held from the workspace's balance
    const falBefore = fal.jobs.length;
    await until(() => fal.jobs.length > falBefore, 30_000);
    expect(fal.jobs).toHaveLength(falBefore + 1);
    const falJob = fal.jobs[fal.jobs.length - 1];
    expect(await creditState(knex, team.id)).toEqual({ credits: 20, reserved: 4, available: 16 });

    const removed = await request(app.baseUrl, `/api/workspaces/${team.id}/members/${member.id}`, { method: 'DELETE', token: team.owner.token });
    expect(removed.status).toBe(200);

    // the removal waits (bounded) for the run to close: the job is cancelled and the credits are back
    const settle = Date.now() + 20_000;
    let row = await knex('video_generation_jobs').where({ id: jobId }).first('status');
    while (row.status !== 'cancelled' && Date.now() < settle) {
      await new Promise((r) => setTimeout(r, 200));
      row = await knex('video_generation_jobs').where({ id: jobId }).first('status');
    }
    expect(row.status).toBe('cancelled');
    expect(await creditState(knex, team.id)).toEqual({ credits: 20, reserved: 0, available: 20 });
    await expectLedgerOk(knex, team.id);
    expect(await knex('credit_reservations').where({ workspace_id: team.id, status: 'active' }).first()).toBeUndefined();
    // the provider's job was cancelled too
    await until(() => falJob.cancelled === true, 10_000);
    expect(falJob.cancelled).toBe(true);
    // and the removed member can no longer see it
    expect((await request(app.baseUrl, `/api/video-generation/status/${jobId}`, { token: member.token, headers: inWorkspace(team.id) })).status).toBe(404);
  });

  it("deleting the team workspace cancels its running clip, then removes its rows and files", async () => {
    const knex = testKnex();
    const { team, projectId, render } = await teamWithRender(app);
    const jobId = await startTeamClip(app, team.owner, team.id, projectId, render);
    const { workflow_id: workflowId } = await knex('video_generation_jobs').where({ id: jobId }).first('workflow_id');
    const falBefore = fal.jobs.length;
    await until(() => fal.jobs.length > falBefore, 30_000);
    const falJob = fal.jobs[fal.jobs.length - 1];
    expect(await creditState(knex, team.id)).toMatchObject({ reserved: 4 });
    const storage = createStorage(app.config);
    expect((await storage.objects.list('renders', team.id)).length).toBeGreaterThan(0);

    const res = await request(app.baseUrl, `/api/workspaces/${team.id}`, { method: 'DELETE', token: team.owner.token });
    expect(res.status).toBe(200);
    const client = await getTemporalClient(app.config);
    const described = await client.workflow.getHandle(workflowId).describe();
    expect(described.status.name).not.toBe('RUNNING');
    await until(() => falJob.cancelled === true, 10_000);
    expect(falJob.cancelled).toBe(true);
    for (const table of ['workspaces', 'profiles']) expect(await knex(table).where({ id: team.id }).first()).toBeUndefined();
    for (const table of ['projects', 'renders', 'video_generation_jobs', 'credit_transactions', 'credit_reservations']) {
      expect(await knex(table).where({ workspace_id: team.id }).first()).toBeUndefined();
    }
    expect(await storage.objects.list('renders', team.id)).toEqual([]);
  });
});
