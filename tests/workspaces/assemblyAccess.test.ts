/**
 * Video assembly in a team workspace (DESIGN.md "Teams (workspaces)"): the API, the assembly workflow on the run's
 * Temporal dev server with a real worker, ffmpeg. The workspace's clips are assembled by a member into the workspace's
 * project: the job, its video and its pending item belong to the workspace and record the member who started it
 * (created_by); every member follows its status; a viewer may look but not assemble; a non-member finds nothing.
 */
import type { AssemblyJobView } from '../../domain/assembly';
import { addCredits } from '../../services/billing/credits';
import { assemble, assemblyFileStored, removeFixtures, startAssemblyApp, storeClip, type AssemblyTestApp, type AssemblyUser } from '../assembly/fixtures';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';

type Role = 'owner' | 'member' | 'viewer';

let app: AssemblyTestApp;
let worker: RunningWorker;
const people = {} as Record<Role | 'outsider', TestUser>;
let workspaceId: string;
let projectId: string;
let clipIds: string[];

const inWorkspace = (id: string) => ({ 'x-workspace-id': id });

async function status(user: TestUser, jobId: string, headers: Record<string, string> = inWorkspace(workspaceId)) {
  return request<{ job: AssemblyJobView }>(app.baseUrl, `/api/video/assemble?jobId=${jobId}`, { token: user.token, headers });
}

async function waitFor(user: TestUser, jobId: string): Promise<AssemblyJobView> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const res = await status(user, jobId);
    expect(res.status).toBe(200);
    if (['completed', 'failed', 'cancelled'].includes(res.body.job.status)) return res.body.job;
    if (Date.now() > deadline) throw new Error(`assembly ${jobId} still ${res.body.job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

beforeAll(async () => {
  app = await startAssemblyApp();
  worker = await startClipWorker(app.taskQueue, { config: app.config });
  const knex = testKnex();
  for (const who of ['owner', 'member', 'viewer', 'outsider'] as const) people[who] = await createTestUser(app.baseUrl);
  const [row] = await knex('workspaces').insert({ name: 'Assembly Studio', created_by: people.owner.id }).returning<{ id: string }[]>('id');
  workspaceId = row.id;
  await knex('profiles').insert({ id: workspaceId, email: people.owner.email, name: 'Assembly Studio' });
  await addCredits(knex, { workspaceId, amount: 20, type: 'signup_bonus', description: 'Team credits', idempotencyKey: `team:${workspaceId}` });
  await knex('workspace_members').insert([
    { workspace_id: workspaceId, user_id: people.owner.id, role: 'owner' },
    { workspace_id: workspaceId, user_id: people.member.id, role: 'member' },
    { workspace_id: workspaceId, user_id: people.viewer.id, role: 'viewer' },
  ]);
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: people.owner.token, headers: inWorkspace(workspaceId), json: { name: 'Team Harbour' } });
  expect(project.status).toBe(201);
  projectId = project.body.project.id;
  // the workspace's approved clips: the account (workspace) owns them, stored in its folder
  const account = { id: workspaceId, projectId } as AssemblyUser;
  clipIds = [(await storeClip(app.config, account, { index: 0 })).id, (await storeClip(app.config, account, { index: 1 })).id];
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await removeFixtures();
  await closeTestKnex();
});

describe('assembly in a team workspace', () => {
  it("lists the workspace's clips for every member, and nothing of them for a non-member", async () => {
    for (const role of ['owner', 'member', 'viewer'] as const) {
      const res = await request<{ clips: Array<{ id: string }> }>(app.baseUrl, '/api/video-assembly/clips', { token: people[role].token, headers: inWorkspace(workspaceId) });
      expect(res.status).toBe(200);
      expect(res.body.clips.map((c) => c.id).sort()).toEqual([...clipIds].sort());
    }
    const outsider = await request(app.baseUrl, '/api/video-assembly/clips', { token: people.outsider.token, headers: inWorkspace(workspaceId) });
    expect(outsider.status).toBe(404);
    const own = await request<{ clips: unknown[] }>(app.baseUrl, '/api/video-assembly/clips', { token: people.outsider.token });
    expect(own.body.clips).toEqual([]);
  });

  it('a viewer and a non-member cannot start one: nothing is recorded', async () => {
    const viewer = await assemble(app.baseUrl, { ...people.viewer, projectId }, clipIds);
    expect(viewer.status).toBe(403);
    expect(viewer.body.code).toBe('WORKSPACE_FORBIDDEN');
    const viewerDry = await request(app.baseUrl, '/api/video-assembly/dry-run', { token: people.viewer.token, json: { projectId, clipIds } });
    expect(viewerDry.status).toBe(403);
    // another account's project: the spec's own refusal ('You do not have permission to use this project')
    const outsider = await assemble(app.baseUrl, { ...people.outsider, projectId }, clipIds);
    expect(outsider.status).toBe(403);
    expect(outsider.body.code).toBe('PROJECT_PERMISSION');
    expect(await testKnex()('assembly_jobs').where({ project_id: projectId })).toEqual([]);
  });

  it("a member's assembly belongs to the workspace, records the member, and every member follows it", async () => {
    const dry = await request(app.baseUrl, '/api/video-assembly/dry-run', { token: people.member.token, json: { projectId, clipIds } });
    expect(dry.status).toBe(200);
    const started = await assemble(app.baseUrl, { ...people.member, projectId }, clipIds);
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;

    const job = await waitFor(people.member, jobId);
    expect(job).toMatchObject({ status: 'completed', projectId });
    const row = await testKnex()('assembly_jobs').where({ id: jobId }).first();
    expect(row).toMatchObject({ workspace_id: workspaceId, created_by: people.member.id, project_id: projectId });
    expect(await assemblyFileStored(workspaceId, jobId, 'video.mp4')).toBe(true);
    const pending = await testKnex()('pending_approvals').where({ source_job_id: jobId }).first();
    expect(pending).toMatchObject({ workspace_id: workspaceId, created_by: people.member.id, status: 'pending' });

    for (const role of ['owner', 'viewer'] as const) {
      const seen = await status(people[role], jobId);
      expect(seen.status).toBe(200);
      expect(seen.body.job.status).toBe('completed');
    }
    // a member finds it without naming the workspace (the start needed none: the project's workspace), and a
    // non-member finds none anywhere
    const unnamed = await status(people.member, jobId, {});
    expect({ status: unnamed.status, job: unnamed.body.job?.status }).toEqual({ status: 200, job: 'completed' });
    expect((await status(people.outsider, jobId, {})).status).toBe(404);
    expect((await status(people.outsider, jobId)).status).toBe(404);
  });
});
