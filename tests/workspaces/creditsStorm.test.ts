/**
 * The ledger invariant per workspace under concurrent members (issue 27, acceptance 4): four members of one team
 * workspace start generations and approve and reject at once, through the API and the real approval workflows,
 * on distinct items and on the same items. Afterwards: balance = sum of the ledger, reserved = sum of active
 * reservations, neither negative; every item was decided once and charged at most once (one consume row, by the
 * member whose approval won); refused starts held nothing.
 */
import { PendingLimitReachedError, InsufficientCreditsError, addCredits, checkLedgerInvariant } from '../../services/billing/credits';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request, type JsonResponse } from '../support/http';
import { startHarness, type Harness } from '../imageEdit/harness';
import { createTeam, inTeam, seedTeamImage, teamProject, type TeamItem } from './creditsFixtures';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('credits-storm');
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

type Decision = 'approve' | 'reject';

interface Call {
  item: TeamItem;
  user: TestUser;
  decision: Decision;
}

async function sqlState(accountId: string): Promise<{ credits: number; reserved: number; ledgerSum: number; activeSum: number }> {
  const { rows } = await h.knex.raw(
    `select p.credits, p.reserved_credits,
            (select coalesce(sum(amount), 0)::int from credit_transactions where workspace_id = p.id) as ledger_sum,
            (select coalesce(sum(amount), 0)::int from credit_reservations where workspace_id = p.id and status = 'active') as active_sum
       from profiles p where p.id = ?`,
    [accountId],
  );
  return { credits: rows[0].credits, reserved: rows[0].reserved_credits, ledgerSum: rows[0].ledger_sum, activeSum: rows[0].active_sum };
}

async function expectInvariant(accountId: string): Promise<void> {
  const state = await sqlState(accountId);
  expect(state.credits).toBe(state.ledgerSum);
  expect(state.reserved).toBe(state.activeSum);
  expect(state.credits).toBeGreaterThanOrEqual(0);
  expect(state.reserved).toBeGreaterThanOrEqual(0);
  expect(state.reserved).toBeLessThanOrEqual(state.credits);
  expect((await checkLedgerInvariant(h.knex, accountId)).ok).toBe(true);
}

describe('one workspace balance under concurrent members', () => {
  it('keeps the invariant and charges each item once while four members start, approve and reject at once', async () => {
    const [owner, m1, m2, m3] = await Promise.all(['Storm Owner', 'Storm One', 'Storm Two', 'Storm Three'].map((name) => createTestUser(h.baseUrl, { name })));
    const people = [owner, m1, m2, m3];
    const team = await createTeam(h.knex, owner, [[m1, 'member'], [m2, 'member'], [m3, 'admin']], 30);
    // a purchase by the workspace, so rejections are allowed
    await addCredits(h.knex, { workspaceId: team.id, amount: 12, type: 'purchase', description: 'Small Project', idempotencyKey: `storm-buy:${team.id}`, actorId: m3.id });
    const projectId = await teamProject(h.knex, team.id);

    const decide = ({ item, user, decision }: Call): Promise<JsonResponse> =>
      request(h.baseUrl, `/api/approvals/${decision}`, { token: user.token, json: { approvalId: item.approvalId }, headers: inTeam(team.id) });

    const allItems: TeamItem[] = [];
    const results: Array<{ call: Call; res: JsonResponse }> = [];
    let refusedStarts = 0;

    const start = async (user: TestUser): Promise<TeamItem | null> => {
      try {
        const item = await seedTeamImage(h, team.id, projectId, user);
        allItems.push(item);
        return item;
      } catch (err) {
        // the start rule, judged under the workspace's lock: the pending cap or the credits, never anything else
        if (err instanceof PendingLimitReachedError || err instanceof InsufficientCreditsError) {
          refusedStarts += 1;
          return null;
        }
        throw err;
      }
    };

    // the first items, one started by each member, all at once
    let pending = (await Promise.all(people.map((p) => start(p)))).filter((i): i is TeamItem => i !== null);
    expect(pending.length).toBe(4);

    for (let round = 0; round < 3; round += 1) {
      const calls: Call[] = [];
      pending.forEach((item, i) => {
        const a = people[(i + round) % people.length];
        const b = people[(i + round + 1) % people.length];
        const c = people[(i + round + 2) % people.length];
        if (i % 4 === 0) calls.push({ item, user: a, decision: 'approve' }, { item, user: b, decision: 'approve' }, { item, user: c, decision: 'approve' });
        else if (i % 4 === 1) calls.push({ item, user: a, decision: 'approve' }, { item, user: b, decision: 'reject' });
        else if (i % 4 === 2) calls.push({ item, user: a, decision: 'approve' });
        else calls.push({ item, user: a, decision: 'approve' }, { item, user: b, decision: 'approve' });
      });
      const [decided, started] = await Promise.all([
        Promise.all(calls.map(async (call) => ({ call, res: await decide(call) }))),
        // meanwhile every member starts two more
        Promise.all(people.flatMap((p) => [start(p), start(p)])),
      ]);
      results.push(...decided);
      pending = started.filter((i): i is TeamItem => i !== null);
      await expectInvariant(team.id);
    }
    // what is still pending is approved by two members at once
    const last = await Promise.all(pending.flatMap((item, i) => [people[i % 4], people[(i + 1) % 4]].map(async (user) => ({ call: { item, user, decision: 'approve' as Decision }, res: await decide({ item, user, decision: 'approve' }) }))));
    results.push(...last);

    // every call either decided its item (200) or found it decided already (409): one winner per item
    for (const { res } of results) expect([200, 409]).toContain(res.status);
    const winners = new Map<string, { user: TestUser; decision: Decision }>();
    for (const { call, res } of results) {
      if (res.status !== 200) {
        expect(res.body.code).toBe('APPROVAL_NOT_PENDING');
        continue;
      }
      expect(winners.has(call.item.approvalId)).toBe(false);
      winners.set(call.item.approvalId, { user: call.user, decision: call.decision });
    }
    expect(winners.size).toBe(allItems.length);
    expect(allItems.length).toBeGreaterThan(4);

    // each item: its row and reservation agree with the winning decision; approved ones have exactly one consume row, by the winner
    let approved = 0;
    for (const item of allItems) {
      const winner = winners.get(item.approvalId)!;
      const row = await h.knex('pending_approvals').where({ id: item.approvalId }).first('status');
      const reservation = await h.knex('credit_reservations').where({ id: item.reservationId }).first('status', 'metadata');
      const consumes = await h.knex('credit_transactions').where({ reference_id: item.reservationId, transaction_type: 'consume' }).select('amount', 'created_by');
      if (winner.decision === 'approve') {
        approved += 1;
        expect(row.status).toBe('approved');
        expect(reservation.status).toBe('consumed');
        expect(consumes).toEqual([{ amount: -1, created_by: winner.user.id }]);
      } else {
        expect(row.status).toBe('rejected');
        expect(reservation).toMatchObject({ status: 'released', metadata: { releasedBy: winner.user.id } });
        expect(consumes).toEqual([]);
      }
    }

    await expectInvariant(team.id);
    const state = await sqlState(team.id);
    expect(state.credits).toBe(30 + 12 - approved);
    expect(state.reserved).toBe(0);
    // refused starts reserved nothing: every reservation of the workspace belongs to an item
    expect(await h.knex('credit_reservations').where({ workspace_id: team.id }).count({ n: '*' }).first()).toEqual({ n: String(allItems.length) });
    expect(refusedStarts).toBeGreaterThan(0);

    // spend per member adds up to what was charged, each approver credited with their wins
    const spend = await request(h.baseUrl, '/api/credits/spend-by-member', { token: owner.token, headers: inTeam(team.id) });
    expect(spend.status).toBe(200);
    const byUser = new Map<string, number>((spend.body.members as Array<{ userId: string; spent: number }>).map((m) => [m.userId, m.spent]));
    for (const person of people) {
      const wins = [...winners.values()].filter((w) => w.decision === 'approve' && w.user.id === person.id).length;
      expect(byUser.get(person.id)).toBe(wins);
    }
    // no member's own balance moved
    for (const person of people) expect(await h.knex('profiles').where({ id: person.id }).first('credits', 'reserved_credits')).toEqual({ credits: 5, reserved_credits: 0 });
  });
});
