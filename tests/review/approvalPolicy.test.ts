/**
 * Approval by more than one person (issue 42, acceptance 4): the workspace's policy set by owners and admins, copied
 * onto each pending item; approvals collected by the item's approval workflow (one per person, none after the end)
 * and the charge made once, in the transaction that records the approval that meets the policy; any rejection ends
 * the item. Real API processes, PostgreSQL, Temporal and workers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ANY_MEMBER_POLICY, approvalProgress, mayApproveUnder, progressText, readApprovalPolicy, type ApprovalPolicy } from '../../domain/approvalPolicy';
import { checkLedgerInvariant } from '../../services/billing/credits';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request, type JsonResponse } from '../support/http';
import { buyCredits, startHarness, type Harness } from '../imageEdit/harness';
import { createTeam, inTeam, seedTeamImage, teamProject, type Team } from '../workspaces/creditsFixtures';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as { freePort(): Promise<number> };

const ROOT = path.resolve(__dirname, '..', '..');
let h: Harness;
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let viewer: TestUser;
let team: Team;
let projectId: string;

beforeAll(async () => {
  h = await startHarness('approval-policy');
  [owner, admin, member, viewer] = await Promise.all(
    ['Olivia Owner', 'Adam Admin', 'Mia Member', 'Vic Viewer'].map((name) => createTestUser(h.baseUrl, { name })),
  );
  team = await createTeam(h.knex, owner, [
    [admin, 'admin'],
    [member, 'member'],
    [viewer, 'viewer'],
  ], 40);
  projectId = await teamProject(h.knex, team.id);
  // rejecting needs a past purchase (the specs' rule)
  await buyCredits(h.knex, team.id, 1);
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

function setPolicy(user: TestUser, approvalPolicy: unknown): Promise<JsonResponse> {
  return request(h.baseUrl, `/api/workspaces/${team.id}/approval-policy`, { method: 'PUT', token: user.token, json: { approvalPolicy } });
}

function decide(baseUrl: string, user: TestUser, decision: 'approve' | 'reject', approvalId: string): Promise<JsonResponse> {
  return request(baseUrl, `/api/approvals/${decision}`, { token: user.token, headers: inTeam(team.id), json: { approvalId } });
}

async function listed(user: TestUser, approvalId: string): Promise<Record<string, any>> {
  const res = await request(h.baseUrl, '/api/approvals/list', { token: user.token, headers: inTeam(team.id) });
  expect(res.status).toBe(200);
  return res.body.data.find((item: { id: string }) => item.id === approvalId);
}

async function consumeRows(approvalId: string): Promise<number> {
  const rows = await h.knex('credit_transactions').where({ workspace_id: team.id, transaction_type: 'consume' }).whereRaw("metadata->>'approvalId' = ?", [approvalId]);
  return rows.length;
}

async function outcome(approvalId: string): Promise<string> {
  return h.client.workflow.getHandle(`approval-${approvalId}`).result();
}

describe('the policy rules', () => {
  const approvers = new Set(['a', 'b', 'c']);

  it('any member: one approval meets it; a stored policy that is not one reads as any', () => {
    expect(approvalProgress(ANY_MEMBER_POLICY, [], approvers)).toEqual({ needed: 1, approvedBy: [], awaiting: [], met: false });
    expect(approvalProgress(ANY_MEMBER_POLICY, ['a'], approvers).met).toBe(true);
    expect(readApprovalPolicy(null)).toEqual(ANY_MEMBER_POLICY);
    expect(readApprovalPolicy({ kind: 'count', count: 7 })).toEqual(ANY_MEMBER_POLICY);
    expect(readApprovalPolicy({ kind: 'named', userIds: [1] })).toEqual(ANY_MEMBER_POLICY);
    expect(readApprovalPolicy({ kind: 'count', count: 3 })).toEqual({ kind: 'count', count: 3 });
  });

  it('N approvals: different people, each counted once', () => {
    const policy = { kind: 'count', count: 2 } as const;
    expect(approvalProgress(policy, ['a', 'a'], approvers)).toMatchObject({ needed: 2, approvedBy: ['a'], met: false });
    expect(approvalProgress(policy, ['a', 'b'], approvers).met).toBe(true);
    expect(progressText({ needed: 2, approvedBy: ['a'] })).toBe('1 of 2 approvals');
  });

  it('named approvers: all of those still there; someone who left is not awaited, and with none left anyone may approve', () => {
    const policy: ApprovalPolicy = { kind: 'named', userIds: ['a', 'gone'] };
    expect(approvalProgress(policy, [], approvers)).toMatchObject({ needed: 1, awaiting: ['a'], met: false });
    expect(approvalProgress(policy, ['a'], approvers).met).toBe(true);
    expect(mayApproveUnder(policy, 'b', approvers)).toBe(false);
    expect(mayApproveUnder(policy, 'a', approvers)).toBe(true);
    const allGone: ApprovalPolicy = { kind: 'named', userIds: ['gone'] };
    expect(mayApproveUnder(allGone, 'b', approvers)).toBe(true);
    expect(approvalProgress(allGone, ['b'], approvers)).toMatchObject({ needed: 1, met: true });
  });
});

describe('setting the policy', () => {
  afterEach(async () => {
    expect((await setPolicy(owner, { kind: 'any' })).status).toBe(200);
  });

  it('owners and admins set it; members and viewers are refused and nothing changes', async () => {
    const set = await setPolicy(admin, { kind: 'count', count: 2 });
    expect(set.status).toBe(200);
    expect(set.body.workspace.approvalPolicy).toEqual({ kind: 'count', count: 2 });
    for (const user of [member, viewer]) {
      const refused = await setPolicy(user, { kind: 'any' });
      expect(refused.status).toBe(403);
    }
    const listedWorkspaces = await request(h.baseUrl, '/api/workspaces', { token: member.token });
    expect(listedWorkspaces.body.workspaces.find((w: { id: string }) => w.id === team.id).approvalPolicy).toEqual({ kind: 'count', count: 2 });
    const stranger = await createTestUser(h.baseUrl);
    expect((await setPolicy(stranger, { kind: 'any' })).status).toBe(404);
  });

  it('refuses a bad policy with a clear 400 or 409 and keeps the one before', async () => {
    for (const bad of [undefined, 'count', { kind: 'most' }, { kind: 'count', count: 4 }, { kind: 'count' }, { kind: 'named', userIds: [] }, { kind: 'named', userIds: ['x'] }]) {
      const res = await setPolicy(owner, bad);
      expect(res.status).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    // a viewer may not approve, so may not be named
    const viewerNamed = await setPolicy(owner, { kind: 'named', userIds: [viewer.id] });
    expect(viewerNamed.status).toBe(400);
    expect(viewerNamed.body.error).toBe('Every named approver must be a member of this workspace who may approve (member, admin or owner).');
    const outsider = await createTestUser(h.baseUrl);
    expect((await setPolicy(owner, { kind: 'named', userIds: [outsider.id] })).status).toBe(400);
    // three approvers here (owner, admin, member): 3 is possible, and a team of one could not meet 2
    expect((await setPolicy(owner, { kind: 'count', count: 3 })).status).toBe(200);
    const solo = await createTeam(h.knex, owner, [[viewer, 'viewer']], 0);
    const tooFew = await request(h.baseUrl, `/api/workspaces/${solo.id}/approval-policy`, { method: 'PUT', token: owner.token, json: { approvalPolicy: { kind: 'count', count: 2 } } });
    expect(tooFew.status).toBe(409);
    expect(tooFew.body.error).toBe('This workspace has 1 member who may approve: it needs at least 2 for 2 approvals. Invite more members first.');
    const row = await h.knex('workspaces').where({ id: solo.id }).first('approval_policy', 'approval_count');
    expect(row).toEqual({ approval_policy: 'any', approval_count: null });
  });
});

describe('approving under a policy', () => {
  afterEach(async () => {
    expect((await setPolicy(owner, { kind: 'any' })).status).toBe(200);
    expect((await checkLedgerInvariant(h.knex, team.id)).ok).toBe(true);
  });

  it('two approvals: the first is recorded and shown ("1 of 2"), the same person cannot count twice, the second charges once', async () => {
    expect((await setPolicy(owner, { kind: 'count', count: 2 })).status).toBe(200);
    const item = await seedTeamImage(h, team.id, projectId, member);
    const before = await h.knex('profiles').where({ id: team.id }).first('credits', 'reserved_credits');

    const comment = await request(h.baseUrl, `/api/content/${item.approvalId}/comments`, { token: viewer.token, headers: inTeam(team.id), json: { body: 'The terrace  looks\nbright' } });
    expect(comment.status).toBe(201);
    const first = await decide(h.baseUrl, member, 'approve', item.approvalId);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, contentId: null, approvals: { needed: 2, you_approved: true } });
    expect(first.body.approvals.approved_by.map((p: { name: string }) => p.name)).toEqual(['Mia Member']);
    expect(await consumeRows(item.approvalId)).toBe(0);
    expect(await h.knex('profiles').where({ id: team.id }).first('credits', 'reserved_credits')).toEqual(before);
    expect((await h.knex('pending_approvals').where({ id: item.approvalId }).first('status')).status).toBe('pending');

    // the queue shows it to everyone, with who has approved
    const seenByOwner = await listed(owner, item.approvalId);
    expect(seenByOwner.approvals).toMatchObject({ policy: { kind: 'count', count: 2 }, needed: 2, you_approved: false, you_may_approve: true, awaiting: [] });
    expect(seenByOwner.approvals.approved_by).toEqual([expect.objectContaining({ user_id: member.id, name: 'Mia Member' })]);
    expect((await listed(member, item.approvalId)).approvals.you_approved).toBe(true);

    const again = await decide(h.baseUrl, member, 'approve', item.approvalId);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('APPROVAL_ALREADY_APPROVED');

    // a viewer still may not decide
    expect((await decide(h.baseUrl, viewer, 'approve', item.approvalId)).status).toBe(403);

    const second = await decide(h.baseUrl, owner, 'approve', item.approvalId);
    expect(second.status).toBe(200);
    expect(second.body.contentId).toEqual(expect.any(String));
    expect(await consumeRows(item.approvalId)).toBe(1);
    const consume = await h.knex('credit_transactions').where({ workspace_id: team.id, transaction_type: 'consume' }).whereRaw("metadata->>'approvalId' = ?", [item.approvalId]).first('created_by');
    expect(consume.created_by).toBe(owner.id);
    expect(await outcome(item.approvalId)).toBe('approved');
    const decisions = await h.knex('approval_decisions').where({ approval_id: item.approvalId }).orderBy('created_at').pluck('user_id');
    expect(decisions).toEqual([member.id, owner.id]);
    // no decision after the end
    const late = await decide(h.baseUrl, admin, 'approve', item.approvalId);
    expect(late.status).toBe(409);

    // who did what, by the saved id or the pending one, for anyone who may read the workspace
    for (const id of [second.body.contentId, item.approvalId]) {
      const history = await request(h.baseUrl, `/api/content/${id}/history`, { token: viewer.token, headers: inTeam(team.id) });
      expect(history.status).toBe(200);
      expect(history.body.history.map((e: { kind: string; by: { name: string } | null }) => [e.kind, e.by?.name ?? null])).toEqual([
        ['generated', 'Mia Member'],
        ['comment', 'Vic Viewer'],
        ['approved', 'Mia Member'],
        ['approved', 'Olivia Owner'],
        ['saved', null],
      ]);
      expect(history.body.history[1].text).toBe('The terrace looks bright');
    }
    const stranger = await createTestUser(h.baseUrl);
    expect((await request(h.baseUrl, `/api/content/${item.approvalId}/history`, { token: stranger.token, headers: inTeam(team.id) })).status).toBe(404);
  });

  it('named approvers: only they may approve, all of them must; the item keeps its policy when the workspace changes it', async () => {
    expect((await setPolicy(owner, { kind: 'named', userIds: [admin.id, owner.id] })).status).toBe(200);
    const item = await seedTeamImage(h, team.id, projectId, member);
    // a change of policy applies to items generated after it
    expect((await setPolicy(owner, { kind: 'any' })).status).toBe(200);
    const shown = await listed(member, item.approvalId);
    expect(shown.approvals).toMatchObject({ policy: { kind: 'named', userIds: [admin.id, owner.id] }, needed: 2, you_may_approve: false });
    expect(shown.approvals.awaiting.map((p: { name: string }) => p.name)).toEqual(['Adam Admin', 'Olivia Owner']);

    const refused = await decide(h.baseUrl, member, 'approve', item.approvalId);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('APPROVAL_NOT_AN_APPROVER');
    expect(refused.body.error).toBe('Only the approvers this item names can approve it. You can still reject it or comment.');

    const byAdmin = await decide(h.baseUrl, admin, 'approve', item.approvalId);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.contentId).toBeNull();
    expect(byAdmin.body.approvals.awaiting.map((p: { name: string }) => p.name)).toEqual(['Olivia Owner']);
    const byOwner = await decide(h.baseUrl, owner, 'approve', item.approvalId);
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.contentId).toEqual(expect.any(String));
    expect(await consumeRows(item.approvalId)).toBe(1);
  });

  it('a rejection ends the item after a first approval: the reservation is released and nothing is charged', async () => {
    expect((await setPolicy(owner, { kind: 'count', count: 2 })).status).toBe(200);
    const item = await seedTeamImage(h, team.id, projectId, member);
    expect((await decide(h.baseUrl, member, 'approve', item.approvalId)).status).toBe(200);
    const rejected = await decide(h.baseUrl, admin, 'reject', item.approvalId);
    expect(rejected.status).toBe(200);
    expect(rejected.body.contentId).toBeNull();
    expect(await outcome(item.approvalId)).toBe('rejected');
    expect(await consumeRows(item.approvalId)).toBe(0);
    const reservation = await h.knex('credit_reservations').where({ id: item.reservationId }).first('status');
    expect(reservation.status).toBe('released');
    expect((await decide(h.baseUrl, owner, 'approve', item.approvalId)).status).toBe(409);
    const history = await request(h.baseUrl, `/api/content/${item.approvalId}/history`, { token: member.token, headers: inTeam(team.id) });
    expect(history.body.history.map((e: { kind: string; by: { name: string } | null }) => [e.kind, e.by?.name ?? null])).toEqual([
      ['generated', 'Mia Member'],
      ['approved', 'Mia Member'],
      ['rejected', 'Adam Admin'],
    ]);
  });

  it('items from before policies (no copy) and the default policy approve on the first approval, as the specs say', async () => {
    const item = await seedTeamImage(h, team.id, projectId, member);
    await h.knex('pending_approvals').where({ id: item.approvalId }).update({ approval_policy: null });
    const res = await decide(h.baseUrl, member, 'approve', item.approvalId);
    expect(res.status).toBe(200);
    // the specs' answer, as it was
    expect(res.body).toEqual({ success: true, error: null, code: null, contentId: expect.any(String), warning: null });
  });
});

describe('two approvers at the same moment, through two API processes', () => {
  let second: ChildProcess | null = null;
  let secondUrl = '';

  beforeAll(async () => {
    const port = await services.freePort();
    second = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      cwd: ROOT,
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', SERVICE_NAME: 'api-2', FRONTEND_DIST: path.join(ROOT, 'no-frontend') },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    secondUrl = `http://127.0.0.1:${port}`;
    const until = Date.now() + 90_000;
    for (;;) {
      const live = await fetch(`${secondUrl}/health/live`).then(
        (r) => r.ok,
        () => false,
      );
      if (live) break;
      if (Date.now() > until || second.exitCode !== null) throw new Error('the second API process did not start');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);

  afterAll(async () => {
    if (second && second.exitCode === null) {
      const exited = new Promise((resolve) => second?.once('exit', resolve));
      second.kill('SIGTERM');
      await exited;
    }
  });

  it('charges once, whoever is second, and the ledger holds', async () => {
    expect((await setPolicy(owner, { kind: 'count', count: 2 })).status).toBe(200);
    try {
      for (let round = 0; round < 3; round += 1) {
        const item = await seedTeamImage(h, team.id, projectId, member);
        const answers = await Promise.all([decide(h.baseUrl, member, 'approve', item.approvalId), decide(secondUrl, admin, 'approve', item.approvalId)]);
        expect(answers.map((a) => a.status)).toEqual([200, 200]);
        // one answer recorded the first approval, the other met the policy and saved the item
        expect(answers.filter((a) => a.body.contentId === null)).toHaveLength(1);
        expect(answers.filter((a) => typeof a.body.contentId === 'string')).toHaveLength(1);
        expect(await consumeRows(item.approvalId)).toBe(1);
        expect(await outcome(item.approvalId)).toBe('approved');
        expect(await h.knex('approval_decisions').where({ approval_id: item.approvalId }).count<{ count: string }[]>('* as count')).toEqual([{ count: '2' }]);
      }
      // and a third approver racing the two on an item that needs two: still one charge
      const item = await seedTeamImage(h, team.id, projectId, member);
      const answers = await Promise.all([
        decide(h.baseUrl, member, 'approve', item.approvalId),
        decide(secondUrl, admin, 'approve', item.approvalId),
        decide(secondUrl, owner, 'approve', item.approvalId),
      ]);
      expect(answers.filter((a) => a.status === 200 && typeof a.body.contentId === 'string')).toHaveLength(1);
      for (const a of answers) expect([200, 409]).toContain(a.status);
      expect(await consumeRows(item.approvalId)).toBe(1);
    } finally {
      expect((await setPolicy(owner, { kind: 'any' })).status).toBe(200);
    }
    expect((await checkLedgerInvariant(h.knex, team.id)).ok).toBe(true);
  });
});
