/**
 * Buying credits for a workspace (issue 27, acceptance 4): Stripe Checkout is started by an owner or admin for the
 * request's workspace, its metadata carries the workspace (and the buyer, as before), the webhook credits the
 * workspace with the buyer as the ledger row's actor, and refunds take credits back from it. A member's or viewer's
 * attempt is 403 and creates nothing (no Stripe session, no purchase row); a non-member's is 404.
 */
import { checkLedgerInvariant } from '../../services/billing/credits';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { startBillingHarness, type BillingHarness } from '../billing/harness';
import { accountSnapshot, createTeam, inTeam, type Team } from './creditsFixtures';

let h: BillingHarness;

beforeAll(async () => {
  h = await startBillingHarness();
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
  viewer: TestUser;
  outsider: TestUser;
}

async function crew(): Promise<Crew> {
  const [owner, admin, member, viewer, outsider] = await Promise.all(['Owner', 'Admin', 'Member', 'Viewer', 'Outsider'].map((name) => createTestUser(h.baseUrl, { name })));
  const team = await createTeam(h.knex, owner, [[admin, 'admin'], [member, 'member'], [viewer, 'viewer']], 0);
  return { team, owner, admin, member, viewer, outsider };
}

function buy(user: TestUser, teamId: string, packageId = 'medium') {
  return request(h.baseUrl, '/api/stripe/create-checkout-session', { token: user.token, json: { packageId, userId: user.id }, headers: inTeam(teamId) });
}

describe('Stripe Checkout for a team workspace', () => {
  it("refuses a member's and a viewer's checkout (403) and a non-member's (404), creating nothing", async () => {
    const c = await crew();
    const before = await accountSnapshot(h.knex, c.team.id);
    const sessionsBefore = h.fake.sessionCreates.length;
    for (const user of [c.member, c.viewer]) {
      const res = await buy(user, c.team.id);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('WORKSPACE_FORBIDDEN');
    }
    const foreign = await buy(c.outsider, c.team.id);
    expect(foreign.status).toBe(404);
    expect(h.fake.sessionCreates.length).toBe(sessionsBefore);
    expect(await accountSnapshot(h.knex, c.team.id)).toEqual(before);
    for (const user of [c.member, c.viewer, c.outsider]) {
      expect(await h.knex('credit_purchases').where({ workspace_id: user.id }).count({ n: '*' }).first()).toEqual({ n: '0' });
    }
    // purchases are billing too
    for (const user of [c.member, c.viewer]) expect((await request(h.baseUrl, '/api/stripe/purchases', { token: user.token, headers: inTeam(c.team.id) })).status).toBe(403);
    expect((await request(h.baseUrl, '/api/stripe/purchases', { token: c.outsider.token, headers: inTeam(c.team.id) })).status).toBe(404);
  });

  it("lets an admin buy for the workspace: metadata names it, the webhook credits it with the admin as the actor", async () => {
    const c = await crew();
    const res = await buy(c.admin, c.team.id);
    expect(res.status).toBe(200);
    const sessionId: string = res.body.sessionId;
    const sent = h.fake.sessionCreates.at(-1)!;
    expect(sent.form.metadata).toEqual({ userId: c.admin.id, workspaceId: c.team.id, packageId: 'medium', credits: '30' });
    expect(sent.form.client_reference_id).toBe(c.team.id);
    expect(sent.form.customer_email).toBe(c.admin.email);
    // the default return page opens the team workspace again
    expect(sent.form.success_url).toContain(`workspace=${c.team.id}`);
    expect(await h.knex('credit_purchases').where({ stripe_session_id: sessionId }).first('workspace_id', 'status')).toEqual({ workspace_id: c.team.id, status: 'open' });

    const delivered = await h.fake.deliver(h.fake.event('checkout.session.completed', h.fake.pay(sessionId)));
    expect(delivered.body).toEqual({ received: true, outcome: 'credited' });

    expect(await h.knex('profiles').where({ id: c.team.id }).first('credits', 'total_credits_purchased')).toEqual({ credits: 30, total_credits_purchased: 30 });
    // the admin's own account is untouched: still the 5 starting credits and no purchase
    expect(await h.knex('profiles').where({ id: c.admin.id }).first('credits', 'total_credits_purchased')).toEqual({ credits: 5, total_credits_purchased: 0 });
    const row = await h.knex('credit_transactions').where({ workspace_id: c.team.id, transaction_type: 'purchase' }).first();
    expect(row).toMatchObject({ amount: 30, idempotency_key: sessionId, created_by: c.admin.id, created_by_email: c.admin.email });
    expect((await checkLedgerInvariant(h.knex, c.team.id)).ok).toBe(true);

    // every owner and admin reads the workspace's purchases and the return page's status; the summary is everyone's
    for (const user of [c.owner, c.admin]) {
      const list = await request(h.baseUrl, '/api/stripe/purchases', { token: user.token, headers: inTeam(c.team.id) });
      expect(list.status).toBe(200);
      expect(list.body.data.map((p: { sessionId: string; status: string }) => [p.sessionId, p.status])).toEqual([[sessionId, 'completed']]);
      const status = await request(h.baseUrl, `/api/stripe/purchases/${sessionId}`, { token: user.token, headers: inTeam(c.team.id) });
      expect(status.status).toBe(200);
      expect(status.body.data).toMatchObject({ checkout: { state: 'credited' }, credits: 30 });
    }
    // outside the workspace (the admin's personal one) the session is not found
    expect((await request(h.baseUrl, `/api/stripe/purchases/${sessionId}`, { token: c.admin.token })).status).toBe(404);
    const summary = await request(h.baseUrl, '/api/credits/summary', { token: c.viewer.token, headers: inTeam(c.team.id) });
    expect(summary.body.data).toMatchObject({ credits: 30, totalCreditsPurchased: 30 });
  });

  it("takes a refund back from the workspace's balance, as a system row", async () => {
    const c = await crew();
    const res = await buy(c.owner, c.team.id, 'small');
    expect(res.status).toBe(200);
    const sessionId: string = res.body.sessionId;
    await h.fake.deliver(h.fake.event('checkout.session.completed', h.fake.pay(sessionId)));
    const purchase = await h.knex('credit_purchases').where({ stripe_session_id: sessionId }).first('amount_cents');
    const refunded = await h.fake.deliver(h.fake.event('charge.refunded', h.fake.refundedCharge(sessionId, purchase.amount_cents)));
    expect((refunded.body as { outcome: string }).outcome).toBe('refunded');
    expect(await h.knex('profiles').where({ id: c.team.id }).first('credits', 'total_credits_purchased')).toEqual({ credits: 0, total_credits_purchased: 0 });
    const row = await h.knex('credit_transactions').where({ workspace_id: c.team.id, transaction_type: 'refund' }).first();
    expect(row).toMatchObject({ amount: -12, created_by: null, created_by_email: 'system' });
    expect(await h.knex('profiles').where({ id: c.owner.id }).first('credits')).toEqual({ credits: 5 });
    expect((await checkLedgerInvariant(h.knex, c.team.id)).ok).toBe(true);
  });

  it("records a team session whose purchase row is missing from its metadata (the workspace), and still fulfils a session from before workspaces (the user)", async () => {
    const c = await crew();
    const res = await buy(c.admin, c.team.id, 'small');
    const sessionId: string = res.body.sessionId;
    await h.knex('credit_purchases').where({ stripe_session_id: sessionId }).delete();
    expect((await h.fake.deliver(h.fake.event('checkout.session.completed', h.fake.pay(sessionId)))).body).toEqual({ received: true, outcome: 'credited' });
    expect(await h.knex('credit_purchases').where({ stripe_session_id: sessionId }).first('workspace_id', 'status', 'metadata')).toEqual({
      workspace_id: c.team.id,
      status: 'completed',
      metadata: { buyerId: c.admin.id },
    });
    expect(await h.knex('credit_transactions').where({ workspace_id: c.team.id, transaction_type: 'purchase' }).first('amount', 'created_by')).toEqual({ amount: 12, created_by: c.admin.id });

    // a session created before workspaces: metadata { userId, packageId, credits }, client_reference_id the user
    const solo = await request(h.baseUrl, '/api/stripe/create-checkout-session', { token: c.outsider.token, json: { packageId: 'small' } });
    expect(solo.status).toBe(200);
    const old = h.fake.sessions.get(solo.body.sessionId)!;
    old.metadata = { userId: c.outsider.id, packageId: 'small', credits: '12' };
    await h.knex('credit_purchases').where({ stripe_session_id: old.id }).delete();
    expect((await h.fake.deliver(h.fake.event('checkout.session.completed', h.fake.pay(old.id)))).body).toEqual({ received: true, outcome: 'credited' });
    expect(await h.knex('profiles').where({ id: c.outsider.id }).first('credits', 'total_credits_purchased')).toEqual({ credits: 17, total_credits_purchased: 12 });
    expect(await h.knex('credit_transactions').where({ workspace_id: c.outsider.id, transaction_type: 'purchase' }).first('created_by')).toEqual({ created_by: c.outsider.id });
  });
});
