/**
 * Buying credits in the browser: the Billing tab's Buy button opens the (fake) Stripe Checkout page, Pay delivers
 * the signed webhook and returns to the app, which confirms the purchase and shows +30 credits; the item waiting in
 * Approvals can then be rejected (the approval workflow runs on this file's own workers).
 */
import { createActivities } from '../../activities';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createProviders } from '../../providers';
import { createStorage } from '../../storage';
import type { TestUser } from '../support/accounts';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe, type FakeStripe } from '../support/fakeStripe';
import { generateImage, startWorkers, uniqueQueues, userWithRender, type RunningWorkers } from '../imageEdit/harness';

let app: BrowserApp;
let fake: FakeStripe;
let workers: RunningWorkers;
let user: TestUser;
const queues = uniqueQueues('browser-billing');

beforeAll(async () => {
  const config = loadConfig();
  fake = await startFakeStripe();
  workers = await startWorkers(queues, createActivities({ knex: testKnex(), config, logger, storage: createStorage(config), providers: createProviders(config) }));
  app = await startBrowserApp({
    taskQueues: queues,
    config: (baseUrl) => ({ publicUrl: baseUrl, stripeSecretKey: FAKE_STRIPE_SECRET_KEY, stripeWebhookSecret: fake.webhookSecret, stripeApiBase: fake.baseUrl }),
  });
  fake.webhookUrl = `${app.baseUrl}/api/stripe/webhook`;
});

afterAll(async () => {
  await app?.close();
  await fake?.close();
  await workers?.stop();
  await closeTestKnex();
});

async function credits(): Promise<{ credits: number; reserved_credits: number; total_credits_purchased: number }> {
  return testKnex()('profiles').where({ id: user.id }).first('credits', 'reserved_credits', 'total_credits_purchased');
}

/** The page fits its viewport's width (given a moment to lay out again after a resize). */
async function noSidewaysScroll(): Promise<boolean> {
  const fits = () => app.page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
  for (let i = 0; i < 10 && !(await fits()); i += 1) await app.page.waitForTimeout(100);
  return fits();
}

describe('buying credits in the browser', () => {
  it('buys the Medium package through Checkout, shows +30 credits once the webhook credited them, then rejects an item', async () => {
    const { page } = app;
    const made = await userWithRender(app.baseUrl);
    user = made.user;
    await useSession(app, user.token);
    const generated = await generateImage(app.baseUrl, user, { baseImage: made.renderId, projectId: made.projectId, prompt: 'a warm dusk light' });
    expect(generated.status).toBe(200);
    expect(await credits()).toEqual({ credits: 5, reserved_credits: 1, total_credits_purchased: 0 });

    await page.goto('/?view=account&tab=billing');
    await page.getByRole('heading', { name: 'Credit Balance' }).waitFor();
    await page.getByRole('heading', { name: 'How Do Credits Work?' }).waitFor();
    await page.getByText('Running low on credits?').waitFor();
    const medium = page.locator('.package-card', { has: page.getByRole('heading', { name: 'Medium Project' }) });
    await medium.getByText('Most Popular').waitFor();
    await medium.getByText('746.35').waitFor();
    await medium.getByText('≈ 7 video clips').waitFor();
    await page.getByRole('img', { name: /Over the last 8 weeks: 5 credits added/ }).waitFor();
    // a test key (sk_test_): the Buy area and the checkout page say no real payment happens
    await page.getByRole('note').filter({ hasText: 'Test mode: no real payment' }).waitFor();

    // Stripe may deliver the webhook after the browser is back: the app says it is confirming until then
    fake.webhookDelayMs = 2500;
    await page.getByRole('button', { name: 'Buy credits: Medium Project' }).click();
    await page.getByRole('heading', { name: 'Test-mode checkout' }).waitFor();
    expect(page.url()).toMatch(new RegExp(`^${fake.baseUrl}/checkout/cs_test_`));
    await page.getByText('Pay NZD 746.35 for Medium Project (30 credits)').waitFor();
    await page.getByRole('note').filter({ hasText: 'Test mode: no real payment' }).waitFor();
    await page.getByRole('button', { name: 'Pay', exact: true }).click();

    await page.getByText('We are confirming your purchase with Stripe...').waitFor();
    const returned = new URL(page.url());
    expect(returned.origin).toBe(app.baseUrl);
    expect(returned.searchParams.get('purchase')).toBe('success');
    expect(returned.searchParams.get('session_id')).toMatch(/^cs_test_/);
    await page.getByText('Purchase complete: +30 credits (Medium Project).').waitFor({ timeout: 20_000 });
    await page.getByText('You now have 34 credits available: 35 in total, 1 reserved for items waiting for approval.').waitFor();
    await page.locator('.balance-amount').getByText('34').waitFor();
    expect(await fake.pendingDelivery).toEqual({ status: 200, body: { received: true, outcome: 'credited' } });
    expect(await credits()).toEqual({ credits: 35, reserved_credits: 1, total_credits_purchased: 30 });

    const history = page.locator('section', { has: page.getByRole('heading', { name: 'Purchase History' }) });
    const row = history.getByRole('row', { name: /Medium Project/ });
    await row.getByText('$746.35 NZD').waitFor();
    await row.getByText('Paid').waitFor();
    const ledger = page.locator('section', { has: page.getByRole('heading', { name: 'Credit Transactions' }) });
    await ledger.getByRole('row', { name: /Medium Project \(30 credits\)/ }).getByText('+30').waitFor();
    await page.getByRole('img', { name: /35 credits added/ }).waitFor();
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(await noSidewaysScroll()).toBe(true);
    await app.screenshot('billing-after-purchase-1440');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await noSidewaysScroll()).toBe(true);
    await page.goto('/?view=account&tab=billing');
    await page.getByRole('img', { name: /35 credits added/ }).waitFor();
    expect(await noSidewaysScroll()).toBe(true);
    await app.screenshot('billing-after-purchase-390');
    await page.setViewportSize({ width: 1280, height: 800 });

    // the purchase lifts REJECTION_REQUIRES_PURCHASE: rejecting goes through the approval workflow
    await page.getByRole('button', { name: 'Approvals 1 pending' }).click();
    await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    await page.locator('.approval-card').getByRole('button', { name: /^Reject/ }).click();
    await page.getByText('Item rejected. Its credits are available again.').waitFor({ timeout: 30_000 });
    await page.getByText('No pending approvals').waitFor();
    expect(await credits()).toEqual({ credits: 35, reserved_credits: 0, total_credits_purchased: 30 });
    expect(app.pageErrors).toEqual([]);
  }, 120_000);

  it('says nothing was charged when checkout is cancelled', async () => {
    const { page } = app;
    await page.goto('/?view=account&tab=billing');
    await page.getByRole('button', { name: 'Buy credits: Small Project' }).click();
    await page.getByRole('heading', { name: 'Test-mode checkout' }).waitFor();
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByText('Checkout was cancelled. Nothing was charged.').waitFor();
    expect(new URL(page.url()).searchParams.get('purchase')).toBe('cancelled');
    const open = page.locator('section', { has: page.getByRole('heading', { name: 'Purchase History' }) }).getByRole('row', { name: /Small Project/ });
    await open.getByText('Pending').waitFor();
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByText('Checkout was cancelled.').waitFor({ state: 'detached' });
    expect(new URL(page.url()).searchParams.get('purchase')).toBeNull();
    expect(await credits()).toEqual({ credits: 35, reserved_credits: 0, total_credits_purchased: 30 });
    expect(app.pageErrors).toEqual([]);
  });

  it("shows 'Failed to process credit purchase' for a session that is not the user's", async () => {
    const { page } = app;
    await page.goto('/?view=account&tab=billing&purchase=success&session_id=cs_test_not_yours');
    await page.getByRole('alert').getByText('Failed to process credit purchase').waitFor();
    expect(app.pageErrors).toEqual([]);
  });
});
