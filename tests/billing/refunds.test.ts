/**
 * Refunds in the reports: the weekly chart's data and the transactions list show what Stripe refunds took back and
 * what admins corrected (both ways), apart from purchases and spending.
 */
import { adminAdjustCredits } from '../../services/billing/credits';
import { createTestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { startBillingHarness, userWithOpenCheckout, type BillingHarness } from './harness';

let h: BillingHarness;

beforeAll(async () => {
  h = await startBillingHarness();
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

describe('refunds and admin corrections in the reports', () => {
  it('counts them apart in the weekly usage and names them in the transactions list', async () => {
    const { user, sessionId } = await userWithOpenCheckout(h, 'large'); // 72 credits, 137425 cents
    const admin = await createTestUser(h.baseUrl);
    expect(((await h.fake.deliver(h.fake.event('checkout.session.completed', h.fake.pay(sessionId)))).body as { outcome: string }).outcome).toBe('credited');
    // a quarter refunded: floor(72 x 34356 / 137425) = 17 credits back
    expect(((await h.fake.deliver(h.fake.event('charge.refunded', h.fake.refundedCharge(sessionId, 34356)))).body as { outcome: string }).outcome).toBe('refunded');
    await adminAdjustCredits(h.knex, { workspaceId: user.id, amount: 6, reason: 'Goodwill for a failed render', idempotencyKey: `adj-up:${user.id}`, admin });
    await adminAdjustCredits(h.knex, { workspaceId: user.id, amount: -2, reason: 'Duplicate goodwill', idempotencyKey: `adj-down:${user.id}`, admin });

    const usage = await request(h.baseUrl, '/api/credits/weekly-usage?weeks=2', { token: user.token });
    expect(usage.status).toBe(200);
    expect(usage.body.data[1]).toEqual({
      weekStart: expect.any(String),
      added: 5 + 72,
      spent: { image: 0, clip: 0, assembly: 0 },
      refunded: 17,
      adjusted: { added: 6, removed: 2 },
      removed: 0,
    });

    const list = await request(h.baseUrl, '/api/credits/transactions', { token: user.token });
    expect(list.status).toBe(200);
    const rows = list.body.data as Array<{ transactionType: string; amount: number; description: string; createdByEmail: string; metadata: Record<string, unknown> }>;
    expect(rows.map((r) => [r.transactionType, r.amount])).toEqual([
      ['admin_adjust', -2],
      ['admin_adjust', 6],
      ['refund', -17],
      ['purchase', 72],
      ['signup_bonus', 5],
    ]);
    expect(rows[0]).toMatchObject({ description: 'Duplicate goodwill', createdByEmail: admin.email });
    expect(rows[2].description).toBe('Refund: Large Project, 34356 of 137425 cents refunded; 17 credits taken back');
    expect(rows[2].metadata).toMatchObject({ purchasedCreditsRevoked: 17, totalCreditsPurchasedAfter: 55 });
    const summary = await request(h.baseUrl, '/api/credits/summary', { token: user.token });
    expect(summary.body.data).toMatchObject({ credits: 5 + 72 - 17 + 6 - 2, totalCreditsPurchased: 55 });
  });
});
