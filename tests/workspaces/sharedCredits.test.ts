/**
 * One credit balance per workspace (issue 27, acceptance 4): the queue, approve and reject act in the request's
 * workspace by role, the ledger records the acting member, 'rejection requires a purchase' reads the workspace's
 * purchases, and spend per member adds up the charges by who generated and by who approved each item (former members
 * and deleted accounts too).
 * Real API, Temporal dev server, workers and PostgreSQL.
 */
import { ERROR_CODES } from '../../domain/messages';
import { addCredits, checkLedgerInvariant } from '../../services/billing/credits';
import type { MemberSpend } from '../../services/billing/spendByMember';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { startHarness, type Harness } from '../imageEdit/harness';
import { accountSnapshot, createTeam, inTeam, seedTeamImage, teamProject, type Team } from './creditsFixtures';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('shared-credits');
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

interface Crew {
  team: Team;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  member2: TestUser;
  viewer: TestUser;
  outsider: TestUser;
  projectId: string;
}

async function crew(credits = 20): Promise<Crew> {
  const [owner, admin, member, member2, viewer, outsider] = await Promise.all(
    ['Olive Owner', 'Adam Admin', 'Mia Member', 'Max Member', 'Vic Viewer', 'Oscar Outsider'].map((name) => createTestUser(h.baseUrl, { name })),
  );
  const team = await createTeam(h.knex, owner, [[admin, 'admin'], [member, 'member'], [member2, 'member'], [viewer, 'viewer']], credits);
  return { team, owner, admin, member, member2, viewer, outsider, projectId: await teamProject(h.knex, team.id) };
}

function decide(user: TestUser, decision: 'approve' | 'reject', approvalId: string, workspaceId?: string) {
  return request(h.baseUrl, `/api/approvals/${decision}`, { token: user.token, json: { approvalId }, headers: workspaceId ? inTeam(workspaceId) : {} });
}

async function spend(user: TestUser, teamId: string) {
  return request<{ success: boolean; members: MemberSpend[] }>(h.baseUrl, '/api/credits/spend-by-member', { token: user.token, headers: inTeam(teamId) });
}

/** A spend line of a person with an account: `approved` is also the older `spent`. */
function line(user: TestUser, name: string, generated: number, approved: number, member = true): MemberSpend {
  return { userId: user.id, name, email: user.email, generated, approved, spent: approved, deleted: false, member };
}

/** Each column adds up to what the workspace was charged. */
async function expectColumnsAddUp(teamId: string, members: MemberSpend[]): Promise<void> {
  const consumed = await h.knex('credit_transactions').where({ workspace_id: teamId, transaction_type: 'consume' }).sum({ s: 'amount' }).first();
  const charged = -Number(consumed?.s);
  expect(charged).toBeGreaterThan(0);
  expect(members.reduce((sum, m) => sum + m.generated, 0)).toBe(charged);
  expect(members.reduce((sum, m) => sum + m.approved, 0)).toBe(charged);
}

describe('approvals in a team workspace', () => {
  it('shows the queue and the balance to every member, viewers included, and to nobody else', async () => {
    const c = await crew();
    const item = await seedTeamImage(h, c.team.id, c.projectId, c.member);
    for (const user of [c.owner, c.admin, c.member, c.viewer]) {
      const list = await request(h.baseUrl, '/api/approvals/list', { token: user.token, headers: inTeam(c.team.id) });
      expect(list.status).toBe(200);
      expect(list.body.data.map((i: { id: string }) => i.id)).toEqual([item.approvalId]);
      const summary = await request(h.baseUrl, '/api/credits/summary', { token: user.token, headers: inTeam(c.team.id) });
      expect(summary.status).toBe(200);
      expect(summary.body.data).toMatchObject({ credits: 20, reservedCredits: 1, availableCredits: 19 });
    }
    // the outsider: 404 for the workspace; their own queue (no header) does not have the item
    const foreign = await request(h.baseUrl, '/api/approvals/list', { token: c.outsider.token, headers: inTeam(c.team.id) });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('WORKSPACE_NOT_FOUND');
    expect((await request(h.baseUrl, '/api/credits/summary', { token: c.outsider.token, headers: inTeam(c.team.id) })).status).toBe(404);
    const own = await request(h.baseUrl, '/api/approvals/list', { token: c.outsider.token });
    expect(own.body.data).toEqual([]);
    // the member's personal workspace is not the team's
    const personal = await request(h.baseUrl, '/api/credits/summary', { token: c.member.token });
    expect(personal.body.data).toMatchObject({ credits: 5, reservedCredits: 0 });
  });

  it("refuses a viewer's approve and reject (403) and a non-member's (404), changing nothing", async () => {
    const c = await crew();
    await addCredits(h.knex, { workspaceId: c.team.id, amount: 12, type: 'purchase', description: 'Small Project', idempotencyKey: `buy:${c.team.id}`, actorId: c.owner.id });
    const item = await seedTeamImage(h, c.team.id, c.projectId, c.member);
    const before = await accountSnapshot(h.knex, c.team.id);

    for (const decision of ['approve', 'reject'] as const) {
      // the item's project names the workspace: with or without the header, the viewer is refused by role
      for (const header of [c.team.id, undefined]) {
        const res = await decide(c.viewer, decision, item.approvalId, header);
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('WORKSPACE_FORBIDDEN');
      }
      for (const header of [c.team.id, undefined]) {
        const res = await decide(c.outsider, decision, item.approvalId, header);
        expect(res.status).toBe(404);
      }
    }
    expect(await accountSnapshot(h.knex, c.team.id)).toEqual(before);
    expect(await h.knex('pending_approvals').where({ id: item.approvalId }).first('status')).toEqual({ status: 'pending' });
    expect(await h.knex('credit_reservations').where({ id: item.reservationId }).first('status')).toEqual({ status: 'active' });
    const status = await h.client.workflow.getHandle(`approval-${item.approvalId}`).describe();
    expect(status.status.name).toBe('RUNNING');
  });

  it("charges the workspace when a member approves another member's item, recording the approver on the consume row", async () => {
    const c = await crew();
    const item = await seedTeamImage(h, c.team.id, c.projectId, c.member2);
    expect(await h.knex('pending_approvals').where({ id: item.approvalId }).first('created_by')).toEqual({ created_by: c.member2.id });

    const res = await decide(c.member, 'approve', item.approvalId, c.team.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, contentId: expect.any(String) });

    const consume = await h.knex('credit_transactions').where({ workspace_id: c.team.id, transaction_type: 'consume' }).first();
    expect(consume).toMatchObject({ amount: -1, created_by: c.member.id, created_by_email: c.member.email, reference_id: item.reservationId });
    expect(await h.knex('profiles').where({ id: c.team.id }).first('credits', 'reserved_credits')).toEqual({ credits: 19, reserved_credits: 0 });
    // nobody's personal balance moved
    for (const user of [c.member, c.member2]) {
      expect(await h.knex('profiles').where({ id: user.id }).first('credits', 'reserved_credits')).toEqual({ credits: 5, reserved_credits: 0 });
    }
    const image = await h.knex('images').where({ id: res.body.contentId }).first('workspace_id', 'project_id');
    expect(image).toEqual({ workspace_id: c.team.id, project_id: c.projectId });
    expect((await checkLedgerInvariant(h.knex, c.team.id)).ok).toBe(true);
  });

  it("needs a purchase by the workspace to reject (a member's own purchases do not count) and records the rejecting member", async () => {
    const c = await crew();
    // the member bought credits for their personal workspace: not the team's purchase
    await addCredits(h.knex, { workspaceId: c.member.id, amount: 12, type: 'purchase', description: 'Small Project', idempotencyKey: `buy:${c.member.id}`, actorId: c.member.id });
    const item = await seedTeamImage(h, c.team.id, c.projectId, c.member2);
    const before = await accountSnapshot(h.knex, c.team.id);

    const refused = await decide(c.member, 'reject', item.approvalId, c.team.id);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe(ERROR_CODES.rejectionRequiresPurchase);
    expect(await accountSnapshot(h.knex, c.team.id)).toEqual(before);

    // the workspace buys (an admin, through the ledger as the webhook does): now the rejection goes through
    await addCredits(h.knex, { workspaceId: c.team.id, amount: 12, type: 'purchase', description: 'Small Project', idempotencyKey: `buy:${c.team.id}`, actorId: c.admin.id });
    const rejected = await decide(c.member, 'reject', item.approvalId, c.team.id);
    expect(rejected.status).toBe(200);
    const reservation = await h.knex('credit_reservations').where({ id: item.reservationId }).first('status', 'metadata');
    expect(reservation).toMatchObject({ status: 'released', metadata: { actorId: c.member2.id, releasedBy: c.member.id, releaseReason: 'rejected' } });
    expect(await h.knex('profiles').where({ id: c.team.id }).first('credits', 'reserved_credits', 'rejection_streak')).toEqual({ credits: 32, reserved_credits: 0, rejection_streak: 1 });
    // the streak is the workspace's, not the member's
    expect(await h.knex('profiles').where({ id: c.member.id }).first('rejection_streak')).toEqual({ rejection_streak: 0 });
    expect((await checkLedgerInvariant(h.knex, c.team.id)).ok).toBe(true);
  });
});

describe('GET /api/credits/spend-by-member', () => {
  it('sums the charges per generating and per approving user, lists every member, former members, and deleted accounts as one line', async () => {
    const c = await crew(30);
    // member approves 3, member2 approves 2, the owner 1; each item started by the other member (member2 starts the
    // member's 3, the member starts the other 3)
    const approvers = [c.member, c.member, c.member, c.member2, c.member2, c.owner];
    for (const approver of approvers) {
      const item = await seedTeamImage(h, c.team.id, c.projectId, approver === c.member ? c.member2 : c.member);
      expect((await decide(approver, 'approve', item.approvalId, c.team.id)).status).toBe(200);
    }

    const res = await spend(c.admin, c.team.id);
    expect(res.status).toBe(200);
    expect(res.body.members).toEqual([
      line(c.member, 'Mia Member', 3, 3),
      line(c.member2, 'Max Member', 3, 2),
      line(c.owner, 'Olive Owner', 0, 1),
      line(c.admin, 'Adam Admin', 0, 0),
      line(c.viewer, 'Vic Viewer', 0, 0),
    ]);
    await expectColumnsAddUp(c.team.id, res.body.members);

    // member2 leaves the workspace: still listed with what they generated and approved; member's account is
    // deleted: 'deleted account', both columns
    await h.knex('workspace_members').where({ workspace_id: c.team.id, user_id: c.member2.id }).delete();
    await h.knex('users').where({ id: c.member.id }).delete();
    const after = await spend(c.owner, c.team.id);
    expect(after.status).toBe(200);
    expect(after.body.members).toEqual([
      { userId: null, name: 'deleted account', email: null, generated: 3, approved: 3, spent: 3, deleted: true, member: false },
      line(c.member2, 'Max Member', 3, 2, false),
      line(c.owner, 'Olive Owner', 0, 1),
      line(c.admin, 'Adam Admin', 0, 0),
      line(c.viewer, 'Vic Viewer', 0, 0),
    ]);
    await expectColumnsAddUp(c.team.id, after.body.members);
  });

  it("credits the member who generated and the one who approved, and keeps a removed member's row as a former member", async () => {
    const c = await crew(30);
    // member2 generates two images, the member approves them; the member generates one, the admin approves it
    for (const [starter, approver] of [[c.member2, c.member], [c.member2, c.member], [c.member, c.admin]] as const) {
      const item = await seedTeamImage(h, c.team.id, c.projectId, starter);
      expect((await decide(approver, 'approve', item.approvalId, c.team.id)).status).toBe(200);
    }
    const before = await spend(c.owner, c.team.id);
    expect(before.body.members).toEqual([
      line(c.member2, 'Max Member', 2, 0),
      line(c.member, 'Mia Member', 1, 2),
      line(c.admin, 'Adam Admin', 0, 1),
      line(c.owner, 'Olive Owner', 0, 0),
      line(c.viewer, 'Vic Viewer', 0, 0),
    ]);

    // the owner removes member2, who generated but approved nothing: their row stays, as a former member
    const removed = await request(h.baseUrl, `/api/workspaces/${c.team.id}/members/${c.member2.id}`, { method: 'DELETE', token: c.owner.token });
    expect(removed.status).toBe(200);
    const after = await spend(c.owner, c.team.id);
    expect(after.status).toBe(200);
    const expected = [
      line(c.member2, 'Max Member', 2, 0, false),
      line(c.member, 'Mia Member', 1, 2),
      line(c.admin, 'Adam Admin', 0, 1),
      line(c.owner, 'Olive Owner', 0, 0),
      line(c.viewer, 'Vic Viewer', 0, 0),
    ];
    expect(after.body.members).toEqual(expected);
    await expectColumnsAddUp(c.team.id, after.body.members);

    // the approved items' queue rows gone (their project deleted): who generated is read from the reservations
    await h.knex('pending_approvals').where({ workspace_id: c.team.id }).delete();
    expect((await spend(c.owner, c.team.id)).body.members).toEqual(expected);
    // charges from before starters were recorded at all: the approver was the starter then
    await h.knex('credit_reservations').where({ workspace_id: c.team.id }).update({ metadata: h.knex.raw("metadata - 'actorId'") });
    expect((await spend(c.owner, c.team.id)).body.members).toEqual([
      line(c.member, 'Mia Member', 2, 2),
      line(c.admin, 'Adam Admin', 1, 1),
      line(c.owner, 'Olive Owner', 0, 0),
      line(c.viewer, 'Vic Viewer', 0, 0),
    ]);
  });

  it('is for owners and admins: a member or viewer gets 403, a non-member 404', async () => {
    const c = await crew();
    expect((await spend(c.owner, c.team.id)).status).toBe(200);
    expect((await spend(c.admin, c.team.id)).status).toBe(200);
    for (const user of [c.member, c.viewer]) {
      const res = await spend(user, c.team.id);
      expect(res.status).toBe(403);
      expect((res.body as unknown as { code: string }).code).toBe('WORKSPACE_FORBIDDEN');
    }
    expect((await spend(c.outsider, c.team.id)).status).toBe(404);
    // alone in the personal workspace, the owner sees their own spend
    const own = await request(h.baseUrl, '/api/credits/spend-by-member', { token: c.outsider.token });
    expect(own.status).toBe(200);
    expect(own.body.members).toEqual([line(c.outsider, 'Oscar Outsider', 0, 0)]);
  });
});
