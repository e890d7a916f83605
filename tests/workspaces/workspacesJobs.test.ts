/**
 * Removing a member cancels the jobs they started in the workspace (issue 27, item 5): a member starts a clip in a
 * team workspace on a hosted provider whose jobs run until cancelled; the clip reserves 4 of the workspace's
 * credits. Once the member is removed, the clip's workflow is cancelled (the provider's job too), the job reads
 * cancelled, and its reservation goes back to the workspace's balance, with the ledger invariant intact. Real API,
 * Temporal worker, PostgreSQL and storage, as the clip tests run them.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createProviders } from '../../providers';
import { addCredits } from '../../services/billing/credits';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { createTeamWorkspace, inWorkspace, joinWorkspace } from '../support/workspaces';
import { clipTestConfig, creditState, expectLedgerOk, renderJpeg, startClipApp, startClipWorker, type ClipTestApp, type RunningWorker } from '../clips/fixtures';

const KEY = 'members-jobs-key';
const SLOW_MODEL = 'fake/video-slow';

describe("a removed member's running clip", () => {
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

  it('is cancelled when they are removed, and its reservation goes back to the workspace', async () => {
    const knex = testKnex();
    const team = await createTeamWorkspace(app.baseUrl, { name: 'Clip Crew' });
    await addCredits(knex, { profileId: team.id, amount: 20, type: 'purchase', description: 'Team purchase', idempotencyKey: `team-purchase:${randomUUID()}` });
    const member = await joinWorkspace(app.baseUrl, team, 'member');

    // the member makes a project in the team workspace and uploads a render into it
    const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: member.token, json: { name: 'Quay' }, headers: inWorkspace(team.id) });
    expect(project.status).toBe(201);
    const projectId = project.body.project.id;
    const form = new FormData();
    form.append('projectId', projectId);
    form.append('file', new Blob([new Uint8Array(await renderJpeg())], { type: 'image/jpeg' }), 'quay.jpg');
    const upload = await request<{ render: { data: { id: string; file_url: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: member.token, headers: inWorkspace(team.id) });
    expect([200, 201]).toContain(upload.status);

    const start = await request<{ success: boolean; jobId: string }>(app.baseUrl, '/api/video-generation/start', {
      token: member.token,
      headers: inWorkspace(team.id),
      json: {
        options: { imageUrl: upload.body.render.data.file_url, movement: 'Zoom In', originalPrompt: 'Boats at the quay', duration: 5, platform: 'YouTube' },
        context: { projectId, userId: member.id, renderId: upload.body.render.data.id, isTemporaryImage: false },
      },
    });
    expect(start.status).toBe(200);
    const jobId = start.body.jobId;
    const job = await knex('video_generation_jobs').where({ id: jobId }).first('user_id', 'created_by', 'status', 'workflow_id');
    expect(job).toMatchObject({ user_id: team.id, created_by: member.id });
    // running at the provider, 4 credits held from the workspace's balance
    const deadline = Date.now() + 30_000;
    while (fal.jobs.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(fal.jobs).toHaveLength(1);
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
    expect(await knex('credit_reservations').where({ profile_id: team.id, status: 'active' }).first()).toBeUndefined();
    // the provider's job was cancelled too
    const cancelledAtProvider = Date.now() + 10_000;
    while (!fal.jobs[0].cancelled && Date.now() < cancelledAtProvider) await new Promise((r) => setTimeout(r, 100));
    expect(fal.jobs[0].cancelled).toBe(true);
    // and the removed member can no longer see it
    expect((await request(app.baseUrl, `/api/video-generation/status/${jobId}`, { token: member.token, headers: inWorkspace(team.id) })).status).toBe(404);
  });
});
