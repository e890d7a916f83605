/**
 * Accounts in a team product (issue 27, item 7; DESIGN.md "Teams (workspaces)"): deleting an account that is the only
 * owner of a workspace with other members is refused until ownership is transferred; otherwise the personal
 * workspace and the memberships go with it, the user's running jobs in shared workspaces are cancelled (their
 * reservations released) and their ledger rows there stay, shown as 'deleted account'. The data export lists the
 * user's memberships. Real API, Temporal worker, PostgreSQL and storage.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { accountDeletionWorkflowId, type DataExportView } from '../../domain/accountData';
import { addCredits, consumeReservation, reserveCredits } from '../../services/billing/credits';
import { accountDeletionWorkflow, type AccountDeletionResult } from '../../workflows';
import { createAccountDeletionActivities } from '../../activities/accountDeletion';
import { logger } from '../../config/logger';
import type { ClipJobView } from '../../domain/clipGeneration';
import { renderJpeg, startClipWorker, type ClipUser, type RunningWorker } from '../clips/fixtures';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { testClient } from '../support/temporal';
import { createTeamWorkspace, invite, inWorkspace, joinWorkspace, type TeamWorkspace } from '../support/workspaces';
import { readZip, rowsMentioning, startAccountDataApp, storagePathsContaining, waitForExport, type AccountDataApp } from '../accountData/support/accountDataApp';

let app: AccountDataApp;
let worker: RunningWorker;
let client: Client;
let closeClient: () => Promise<void>;
let scratch: string;

beforeAll(async () => {
  app = await startAccountDataApp();
  // a slow encode keeps a clip running while its starter's account is deleted
  worker = await startClipWorker(app.taskQueue, { providerOptions: { videoPreset: 'slow' } });
  ({ client, close: closeClient } = await testClient());
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'accounts-'));
});

afterAll(async () => {
  await worker?.stop();
  await closeClient?.();
  await app?.close();
  await fs.rm(scratch, { recursive: true, force: true });
  await closeTestKnex();
});

function deleteAccount(user: TestUser) {
  return request<{ success: boolean; status?: string; workflowId?: string; error?: string; code?: string }>(app.baseUrl, '/api/account/delete', {
    token: user.token,
    json: { confirmEmail: user.email },
  });
}

/** The user's personal workspace, named as any team workspace is (for the invitation fixtures). */
function personalOf(user: TestUser): TeamWorkspace {
  return { id: user.id, name: 'Personal', owner: user };
}

/** A project with one uploaded render in `workspaceId`, made by `user` through the API. */
async function projectWithRender(user: TestUser, workspaceId: string, name: string): Promise<ClipUser> {
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name }, headers: inWorkspace(workspaceId) });
  expect(project.status).toBe(201);
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(await renderJpeg(900, 506))], { type: 'image/jpeg' }), `${name.toLowerCase().replace(/\W+/g, '-')}.jpg`);
  const upload = await request<{ render: { data: { id: string; file_url: string } } }>(app.baseUrl, '/api/upload/renders', {
    method: 'POST',
    body: form,
    token: user.token,
    headers: inWorkspace(workspaceId),
  });
  expect([200, 201]).toContain(upload.status);
  return { ...user, projectId: project.body.project.id, renderId: upload.body.render.data.id, renderUrl: upload.body.render.data.file_url };
}

/** A charge in `workspaceId` made by `actorId`: a reservation they start, consumed on their approval (one 'consume' row). */
async function spend(workspaceId: string, actorId: string, amount: number, approverId: string = actorId): Promise<void> {
  const reservation = await reserveCredits(testKnex(), { workspaceId, contentType: 'image', amount, idempotencyKey: `spend:${randomUUID()}`, actorId });
  await consumeReservation(testKnex(), { reservationId: reservation.id, description: 'Approved image', actorId: approverId });
}

/** Polls the clip's status in `workspaceId` until it renders (past 12 %); fails on a final state or after 120 s. */
async function clipRunning(user: TestUser, workspaceId: string, jobId: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await request<{ job: ClipJobView }>(app.baseUrl, `/api/video-generation/status/${jobId}`, { token: user.token, headers: inWorkspace(workspaceId) });
    expect(res.status).toBe(200);
    const job = res.body.job;
    if (job.status === 'processing' && job.progress > 12) return;
    if (['completed', 'failed', 'cancelled'].includes(job.status) || Date.now() > deadline) throw new Error(`clip ${jobId} ${job.status} (${job.progress}%: ${job.message})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function counts(workspaceId: string) {
  const knex = testKnex();
  const [members, projects, ledger] = await Promise.all([
    knex('workspace_members').where({ workspace_id: workspaceId }).orderBy('user_id').select('user_id', 'role'),
    knex('projects').where({ workspace_id: workspaceId }).count<{ n: string }[]>({ n: '*' }),
    knex('credit_transactions').where({ workspace_id: workspaceId }).count<{ n: string }[]>({ n: '*' }),
  ]);
  return { members, projects: Number(projects[0].n), ledger: Number(ledger[0].n), profile: await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits') };
}

describe('deleting an account that owns a workspace with other members', () => {
  it('is refused (409, the workspace named) for the only owner of a team workspace, and nothing changes', async () => {
    const team = await createTeamWorkspace(app.baseUrl, { name: `Harbour Studio ${randomUUID().slice(0, 6)}` });
    await joinWorkspace(app.baseUrl, team, 'member');
    const before = { team: await counts(team.id), personal: await counts(team.owner.id) };

    const res = await deleteAccount(team.owner);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      success: false,
      code: 'ONLY_OWNER',
      error: `You are the only owner of “${team.name}”, which has other members. Make another member owner or remove them before deleting your account.`,
    });
    // still signed in, not marked, no deletion started, nothing changed
    expect((await request(app.baseUrl, '/api/auth/me', { token: team.owner.token })).status).toBe(200);
    expect(await testKnex()('users').where({ id: team.owner.id }).first('deletion_requested_at')).toEqual({ deletion_requested_at: null });
    await expect(client.workflow.getHandle(accountDeletionWorkflowId(team.owner.id)).describe()).rejects.toThrow();
    expect({ team: await counts(team.id), personal: await counts(team.owner.id) }).toEqual(before);
  });

  it('is refused for the owner of a personal workspace they invited someone into, naming it and every other such workspace', async () => {
    const owner = await createTestUser(app.baseUrl);
    await joinWorkspace(app.baseUrl, personalOf(owner), 'viewer');
    const team = await createTeamWorkspace(app.baseUrl, { owner, name: `Aalto Works ${randomUUID().slice(0, 6)}` });
    await joinWorkspace(app.baseUrl, team, 'admin');
    const res = await deleteAccount(owner);
    expect([res.status, res.body.code]).toEqual([409, 'ONLY_OWNER']);
    expect(res.body.error).toBe(
      `You are the only owner of your personal workspace “Personal” and “${team.name}”, which have other members. ` +
        'Make another member owner of each, or remove their members, before deleting your account.',
    );
    expect((await request(app.baseUrl, '/api/auth/me', { token: owner.token })).status).toBe(200);
  });

  it('is refused by the workflow too when the check races a change (the mark is taken back, nothing deleted)', async () => {
    const team = await createTeamWorkspace(app.baseUrl);
    await joinWorkspace(app.baseUrl, team, 'member');
    // as if the API had checked just before the member joined: the workflow's first step decides
    await testKnex()('users').where({ id: team.owner.id }).update({ deletion_requested_at: testKnex().fn.now() });
    const result: AccountDeletionResult = await client.workflow.execute(accountDeletionWorkflow, {
      workflowId: accountDeletionWorkflowId(team.owner.id),
      taskQueue: app.taskQueue,
      args: [{ userId: team.owner.id }],
    });
    expect(result).toEqual({ cancelledWorkflows: 0, endedApprovals: 0, removedFiles: 0, deletedUser: false, refused: [{ id: team.id, name: team.name, personal: false }] });
    expect(await testKnex()('users').where({ id: team.owner.id }).first('deletion_requested_at')).toEqual({ deletion_requested_at: null });
    expect((await counts(team.id)).members).toHaveLength(2);
    const signIn = await request(app.baseUrl, '/api/auth/signin', { json: { email: team.owner.email, password: team.owner.password } });
    expect(signIn.status).toBe(200);
  });
});

describe('marking an account for deletion', () => {
  it('revokes the open invitations of the workspaces going with it, so nobody joins one while its files are removed', async () => {
    const owner = await createTestUser(app.baseUrl);
    const invitee = await createTestUser(app.baseUrl);
    const { token } = await invite(app.baseUrl, owner.id, owner, invitee.email, 'member');
    const shared = await createTeamWorkspace(app.baseUrl);
    await joinWorkspace(app.baseUrl, shared, 'member', owner);
    const other = await invite(app.baseUrl, shared.id, shared.owner, `someone-${randomUUID()}@example.test`, 'viewer');

    const activities = createAccountDeletionActivities({ knex: testKnex(), storage: app.storage, logger });
    expect(await activities.markAccountForDeletion({ userId: owner.id })).toEqual({ exists: true });
    const accepted = await request<{ error: string }>(app.baseUrl, `/api/invitations/${token}/accept`, { method: 'POST', token: invitee.token });
    expect(accepted.status).toBe(410);
    expect(await testKnex()('workspace_members').where({ workspace_id: owner.id }).pluck('user_id')).toEqual([owner.id]);
    // a workspace that stays (the user is only a member there) keeps its invitations open
    expect(await testKnex()('workspace_invitations').where({ id: other.invitationId }).first('revoked_at')).toEqual({ revoked_at: null });
  });
});

describe('deleting an account after handing its workspaces over', () => {
  it('keeps the personal workspace with its new owner, cancels the running clip in a shared workspace, and the ledger shows a deleted account', async () => {
    const knex = testKnex();
    const ann = await createTestUser(app.baseUrl, { name: 'Ann Leaving' });
    const annProject = await projectWithRender(ann, ann.id, 'Quay Apartments');
    const ben = await joinWorkspace(app.baseUrl, personalOf(ann), 'member');
    // a studio of Cleo's where Ann is a member and spends the studio's credits
    const studio = await createTeamWorkspace(app.baseUrl, { name: `Cleo Studio ${randomUUID().slice(0, 6)}` });
    await joinWorkspace(app.baseUrl, studio, 'member', ann);
    await addCredits(knex, { workspaceId: studio.id, amount: 30, type: 'purchase', description: 'Studio purchase', idempotencyKey: `studio:${randomUUID()}` });
    await spend(studio.id, ann.id, 2);
    await spend(studio.id, ann.id, 1);
    await spend(studio.id, studio.owner.id, 3);
    // an image Ann generated that the owner approved
    await spend(studio.id, ann.id, 5, studio.owner.id);

    // Ann's clip in the studio, running while she deletes her account
    const studioProject = await projectWithRender(ann, studio.id, 'Studio Tower');
    const started = await request<{ success: boolean; jobId?: string }>(app.baseUrl, '/api/video-generation/start', {
      token: ann.token,
      json: {
        options: { imageUrl: studioProject.renderUrl, movement: 'Pan Left', originalPrompt: 'Tower at dusk', duration: 5, platform: 'YouTube' },
        context: { projectId: studioProject.projectId, userId: ann.id, renderId: studioProject.renderId, isTemporaryImage: false },
      },
    });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    await clipRunning(ann, studio.id, jobId);
    expect(await knex('video_generation_jobs').where({ id: jobId }).first('workspace_id', 'created_by')).toEqual({ workspace_id: studio.id, created_by: ann.id });
    expect((await knex('profiles').where({ id: studio.id }).first('reserved_credits')).reserved_credits).toBe(4);

    // the only owner of her personal workspace, which Ben is in: refused until she hands it over
    const refused = await deleteAccount(ann);
    expect([refused.status, refused.body.code]).toEqual([409, 'ONLY_OWNER']);
    expect(refused.body.error).toContain('your personal workspace “Personal”');
    const transfer = await request(app.baseUrl, `/api/workspaces/${ann.id}/transfer`, { token: ann.token, json: { userId: ben.id } });
    expect(transfer.status).toBe(200);

    const res = await deleteAccount(ann);
    expect(res.status).toBe(202);
    const result: AccountDeletionResult = await client.workflow.getHandle(accountDeletionWorkflowId(ann.id)).result();
    expect(result).toMatchObject({ deletedUser: true, keptPersonalWorkspace: true, endedApprovals: 0 });
    expect(result.cancelledWorkflows).toBeGreaterThanOrEqual(1);

    // her account and memberships are gone
    expect(await knex('users').where({ id: ann.id }).first()).toBeUndefined();
    expect(await knex('workspace_members').where({ user_id: ann.id })).toEqual([]);
    // the invitation she accepted named her e-mail: it went with the account
    expect(await knex('workspace_invitations').where({ email: ann.email })).toEqual([]);
    // the personal workspace stays, as a team workspace of Ben's, with its project, render and files
    expect(await knex('workspaces').where({ id: ann.id }).first('name', 'personal_user_id')).toEqual({ name: 'Personal', personal_user_id: null });
    expect(await knex('workspace_members').where({ workspace_id: ann.id }).select('user_id', 'role')).toEqual([{ user_id: ben.id, role: 'owner' }]);
    expect(await knex('projects').where({ id: annProject.projectId }).first('workspace_id')).toEqual({ workspace_id: ann.id });
    expect(await knex('profiles').where({ id: ann.id }).first('email', 'name')).toEqual({ email: ben.email, name: 'Personal' });
    expect((await storagePathsContaining(ann.id)).length).toBeGreaterThanOrEqual(2);
    const benSees = await request<{ workspaces: Array<{ id: string; role: string; personal: boolean }> }>(app.baseUrl, '/api/workspaces', { token: ben.token });
    expect(benSees.body.workspaces).toContainEqual(expect.objectContaining({ id: ann.id, role: 'owner', personal: false }));

    // her running clip in the studio was cancelled and gave its 4 credits back; the studio's balance is whole
    expect((await client.workflow.getHandle(`clip-${jobId}`).describe()).status.name).toBe('CANCELLED');
    expect(await knex('profiles').where({ id: studio.id }).first('credits', 'reserved_credits')).toEqual({ credits: 19, reserved_credits: 0 });
    expect(await knex('video_generation_jobs').where({ id: jobId }).first('created_by')).toEqual({ created_by: null });
    // the reservations of her jobs in the studio no longer name her either
    expect(await knex('credit_reservations').where({ workspace_id: studio.id }).count<{ count: string }[]>({ count: '*' })).not.toEqual([{ count: '0' }]);
    expect(await knex('credit_reservations').whereRaw('metadata::text like ?', [`%${ann.id}%`]).select('id', 'metadata')).toEqual([]);
    // and her charges there still count as a deleted account's in spend per member, not as the approver's
    // her charges stay in the studio's ledger, by a deleted account, and spend per member still adds up
    const rows = await knex('credit_transactions').where({ workspace_id: studio.id, transaction_type: 'consume' }).orderBy('created_at').select('amount', 'created_by', 'created_by_email');
    expect(rows).toEqual([
      { amount: -2, created_by: null, created_by_email: 'deleted account' },
      { amount: -1, created_by: null, created_by_email: 'deleted account' },
      { amount: -3, created_by: studio.owner.id, created_by_email: studio.owner.email },
      { amount: -5, created_by: studio.owner.id, created_by_email: studio.owner.email },
    ]);
    const spendRes = await request<{ members: Array<{ userId: string | null; spent: number; deleted: boolean; name: string }> }>(app.baseUrl, '/api/credits/spend-by-member', {
      token: studio.owner.token,
      headers: inWorkspace(studio.id),
    });
    expect(spendRes.status).toBe(200);
    expect(spendRes.body.members.reduce((sum, m) => sum + m.spent, 0)).toBe(11);
    expect(spendRes.body.members).toContainEqual(expect.objectContaining({ userId: null, deleted: true, spent: 3, generated: 8 }));
    expect(spendRes.body.members).toContainEqual(expect.objectContaining({ userId: studio.owner.id, spent: 8, generated: 3 }));
    expect(spendRes.body.members.some((m) => m.userId === ann.id)).toBe(false);
  }, 180_000);

  it('removes a solo user with everything: personal workspace, a team workspace only they were in, rows and files', async () => {
    const dana = await createTestUser(app.baseUrl);
    await projectWithRender(dana, dana.id, 'Dana Home');
    const solo = await createTeamWorkspace(app.baseUrl, { owner: dana, name: `Dana Solo ${randomUUID().slice(0, 6)}` });
    const soloProject = await projectWithRender(dana, solo.id, 'Solo Loft');
    await request(app.baseUrl, '/api/account/exports', { token: dana.token, json: {} });
    await waitForExport(app.baseUrl, dana);
    expect((await storagePathsContaining(dana.id)).length).toBeGreaterThanOrEqual(3);
    expect((await storagePathsContaining(solo.id)).length).toBeGreaterThanOrEqual(2);

    expect((await deleteAccount(dana)).status).toBe(202);
    const result: AccountDeletionResult = await client.workflow.getHandle(accountDeletionWorkflowId(dana.id)).result();
    expect(result).toMatchObject({ deletedUser: true });
    expect(result.keptPersonalWorkspace).toBeUndefined();
    expect(await rowsMentioning(testKnex(), [dana.id, dana.email, solo.id, soloProject.projectId])).toEqual([]);
    expect(await storagePathsContaining(dana.id)).toEqual([]);
    expect(await storagePathsContaining(solo.id)).toEqual([]);
  }, 120_000);
});

describe('data export', () => {
  it("lists the user's memberships (workspace, role, joined) beside the personal workspace's data", async () => {
    const eve = await createTestUser(app.baseUrl);
    await projectWithRender(eve, eve.id, 'Eve Villa');
    const team = await createTeamWorkspace(app.baseUrl, { name: `Export Team ${randomUUID().slice(0, 6)}` });
    await joinWorkspace(app.baseUrl, team, 'viewer', eve);
    // the team's own project is the team's: not in Eve's export
    const teamProject = await projectWithRender(team.owner, team.id, 'Team Secret Project');

    expect((await request(app.baseUrl, '/api/account/exports', { token: eve.token, json: {} })).status).toBe(202);
    const { view } = await waitForExport(app.baseUrl, eve);
    expect(view.status).toBe('completed');
    const zip = path.join(scratch, `${(view as DataExportView).id}.zip`);
    await fs.writeFile(zip, Buffer.from(await (await fetch(new URL(view.downloadUrl as string, app.baseUrl))).arrayBuffer()));
    const entries = await readZip(zip);
    const json = (name: string) => JSON.parse(entries.find((e) => e.name === name)?.data.toString('utf8') ?? 'null');

    const profile = json('profile.json');
    expect(profile.profile).toMatchObject({ id: eve.id, email: eve.email });
    expect(profile.memberships).toEqual([
      { workspaceId: eve.id, name: 'Personal', personal: true, role: 'owner', memberCount: 1, joinedAt: expect.any(String) },
      { workspaceId: team.id, name: team.name, personal: false, role: 'viewer', memberCount: 2, joinedAt: expect.any(String) },
    ]);
    for (const m of profile.memberships) expect(Number.isNaN(Date.parse(m.joinedAt))).toBe(false);
    expect(json('projects.json').projects.map((p: { name: string }) => p.name)).toEqual(['Eve Villa']);
    for (const entry of entries) {
      expect(entry.name).not.toContain(team.id);
      if (entry.name.endsWith('.json')) {
        expect(entry.data.toString('utf8')).not.toContain(teamProject.projectId);
        expect(entry.data.toString('utf8')).not.toContain(team.owner.email);
      }
    }
  });
});
