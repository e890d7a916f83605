/**
 * The return page after Stripe Checkout, used as a buyer would, at desktop and phone sizes: a bank debit (a delayed
 * method) keeps the page saying the payment is being confirmed, past the minute the page used to give up after and
 * across a reload, until the payment clears and the webhook credits it; then it shows the new balance, a reload too.
 * 'Failed to process credit purchase' only for an expired checkout or a failed payment. No serious axe finding.
 * The balance it states is the Credit Balance card's (available, and in total with what pending items reserve), and
 * follows the card when the balance moves; the test-mode checkout page loads without a failed request (its icon).
 */
import type { Response } from 'playwright-core';
import { BILLING_MSG } from '../../domain/billing';
import { releaseReservation, reserveCredits } from '../../services/billing/credits';
import { createTestUser, type TestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe, type FakeStripe } from '../support/fakeStripe';
import { request } from '../support/http';

let app: BrowserApp;
let fake: FakeStripe;
let user: TestUser;

const PROCESSING = 'Your payment is being confirmed.';
const STATUS_CALL = /\/api\/stripe\/purchases\/cs_test_/;

beforeAll(async () => {
  fake = await startFakeStripe();
  app = await startBrowserApp({
    config: (baseUrl) => ({ publicUrl: baseUrl, stripeSecretKey: FAKE_STRIPE_SECRET_KEY, stripeWebhookSecret: fake.webhookSecret, stripeApiBase: fake.baseUrl }),
  });
  fake.webhookUrl = `${app.baseUrl}/api/stripe/webhook`;
  user = await createTestUser(app.baseUrl);
  await useSession(app, user.token);
});

afterAll(async () => {
  await app?.close();
  await fake?.close();
  await closeTestKnex();
});

async function noSidewaysScroll(): Promise<boolean> {
  const fits = () => app.page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
  for (let i = 0; i < 10 && !(await fits()); i += 1) await app.page.waitForTimeout(100);
  return fits();
}

/** Lets the page's clock run ahead until it has asked for the purchase's status once more. */
async function nextStatusPoll(): Promise<void> {
  const answered = app.page.waitForResponse((res) => STATUS_CALL.test(res.url()));
  await app.page.clock.runFor(5000);
  await answered;
}

async function checkedAtBothSizes(name: string): Promise<void> {
  for (const [width, height] of [
    [1440, 900],
    [390, 844],
  ]) {
    await app.page.setViewportSize({ width, height });
    expect(await noSidewaysScroll()).toBe(true);
    expect(await seriousAxeFindings(app.page)).toEqual([]);
    await app.screenshot(`${name}-${width}`);
  }
}

async function openCheckout(packageId: string): Promise<string> {
  const res = await request(app.baseUrl, '/api/stripe/create-checkout-session', { token: user.token, json: { packageId, userId: user.id } });
  expect(res.status).toBe(200);
  return res.body.sessionId as string;
}

describe('the purchase return page', () => {
  it('keeps saying the payment is being confirmed while a bank debit clears, then shows the credited balance', async () => {
    const { page } = app;
    await page.clock.install();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/?view=account&tab=billing');
    await page.getByRole('button', { name: 'Buy credits: Small Project' }).click();
    await page.getByRole('heading', { name: 'Test-mode checkout' }).waitFor();
    await page.getByRole('button', { name: 'Pay by bank debit (clears later)' }).click();

    await page.getByRole('status').getByText(PROCESSING).waitFor();
    const sessionId = new URL(page.url()).searchParams.get('session_id')!;
    expect(sessionId).toMatch(/^cs_test_/);
    expect(fake.deliveries.at(-1)).toEqual({ status: 200, body: { received: true, outcome: 'awaiting_payment' } });

    // well past the minute after which the page used to give up (40 polls of 1.5 s)
    for (let i = 0; i < 45; i += 1) await nextStatusPoll();
    await page.getByRole('status').getByText(PROCESSING).waitFor();
    expect(await page.getByText(BILLING_MSG.purchaseFailed).count()).toBe(0);
    await checkedAtBothSizes('purchase-return-processing');

    // a reload asks again and says the same
    await page.reload();
    await page.getByRole('status').getByText(PROCESSING).waitFor();
    expect(await page.getByText(BILLING_MSG.purchaseFailed).count()).toBe(0);

    // the debit clears: Stripe reports the session paid and sends async_payment_succeeded
    const paid = fake.pay(sessionId, 'paid');
    expect(await fake.deliver(fake.event('checkout.session.async_payment_succeeded', paid))).toEqual({ status: 200, body: { received: true, outcome: 'credited' } });
    await nextStatusPoll();
    await page.getByText('Purchase complete: +12 credits (Small Project).').waitFor();
    await page.getByText('You now have 17 credits available.').waitFor();
    await page.locator('.balance-amount').getByText('17').waitFor();
    await checkedAtBothSizes('purchase-return-credited');

    await page.reload();
    await page.getByText('Purchase complete: +12 credits (Small Project).').waitFor();
    await page.getByText('You now have 17 credits available.').waitFor();
    expect(app.pageErrors).toEqual([]);
  }, 120_000);

  it("says 'Failed to process credit purchase' for an expired checkout, a reload too", async () => {
    const { page } = app;
    const sessionId = await openCheckout('medium');
    fake.expire(sessionId);

    await page.goto(`/?view=account&tab=billing&purchase=success&session_id=${sessionId}`);
    await page.getByRole('alert').getByText(BILLING_MSG.purchaseFailed).waitFor();
    await checkedAtBothSizes('purchase-return-expired');
    await page.reload();
    await page.getByRole('alert').getByText(BILLING_MSG.purchaseFailed).waitFor();
    expect(await page.getByText(PROCESSING).count()).toBe(0);
    expect(app.pageErrors).toEqual([]);
  });

  it("says 'Failed to process credit purchase' once a bank debit fails", async () => {
    const { page } = app;
    await page.setViewportSize({ width: 390, height: 844 });
    const sessionId = await openCheckout('small');
    const unpaid = fake.pay(sessionId, 'unpaid');
    await fake.deliver(fake.event('checkout.session.completed', unpaid));

    await page.goto(`/?view=account&tab=billing&purchase=success&session_id=${sessionId}`);
    await page.getByRole('status').getByText(PROCESSING).waitFor();

    expect((await fake.deliver(fake.event('checkout.session.async_payment_failed', unpaid))).body).toEqual({ received: true, outcome: 'payment_failed' });
    await nextStatusPoll();
    await page.getByRole('alert').getByText(BILLING_MSG.purchaseFailed).waitFor();
    expect(await seriousAxeFindings(page)).toEqual([]);
    expect(app.pageErrors).toEqual([]);
  });

  it('states the balance as the Credit Balance card does, available and in total, and follows the card; the checkout page loads cleanly', async () => {
    const buyer = await createTestUser(app.baseUrl, { name: 'Reserved Buyer' });
    // an item waiting for approval holds 2 of the 5 starting credits
    const held = await reserveCredits(testKnex(), { workspaceId: buyer.id, contentType: 'image', amount: 2, idempotencyKey: `purchase-return:${buyer.id}` });
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 800 } });
    try {
      await useSession({ context, baseUrl: app.baseUrl }, buyer.token);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      // what the browser asks the test-mode checkout server for, and does not get (the app's own event stream is cut
      // by each navigation, as any page's is)
      const failed: string[] = [];
      const checkoutOrigin = new URL(fake.baseUrl).origin;
      page.on('response', (res: Response) => {
        if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
      });
      page.on('requestfailed', (req) => {
        if (new URL(req.url()).origin === checkoutOrigin) failed.push(`failed ${req.url()}`);
      });

      await page.goto('/?view=account&tab=billing');
      await page.locator('.balance-amount').getByText('3').waitFor();
      await page.getByRole('button', { name: 'Buy credits: Small Project' }).click();
      await page.getByRole('heading', { name: 'Test-mode checkout' }).waitFor();
      await page.waitForLoadState('load');
      // the page's icon: a browser asks for the one the page links, else /favicon.ico of the page's server (headless
      // Chromium asks for none, so the test asks as a browser would); it is inline, and /favicon.ico answers too, for
      // the server's pages that are not HTML
      const iconUrl = await page.evaluate<string>(`document.querySelector('link[rel~="icon"]')?.href ?? new URL('/favicon.ico', location.href).href`);
      if (!iconUrl.startsWith('data:')) expect({ iconUrl, status: (await page.request.get(iconUrl)).status() }).toEqual({ iconUrl, status: 200 });
      expect(iconUrl).toMatch(/^data:image\/svg\+xml,/);
      const fallbackIcon = await page.request.get(`${checkoutOrigin}/favicon.ico`);
      expect(fallbackIcon.status()).toBe(200);
      expect(fallbackIcon.headers()['content-type']).toBe('image/svg+xml');
      expect(failed).toEqual([]);
      await page.getByRole('button', { name: 'Pay', exact: true }).click();

      // 5 + 12 = 17 in total, 2 of them reserved: the notice and the card say the same
      const notice = page.locator('.purchase-notice');
      await notice.getByText('Purchase complete: +12 credits (Small Project).').waitFor({ timeout: 20_000 });
      await notice.getByText('You now have 15 credits available: 17 in total, 2 reserved for items waiting for approval.').waitFor();
      const card = page.locator('.balance-panel');
      await card.locator('.balance-amount').getByText('15').waitFor();
      await card.getByText('17 in total, 2 reserved for items waiting for approval.').waitFor();
      expect(await notice.textContent()).not.toContain('balance is now');
      for (const [width, height] of [
        [1280, 800],
        [390, 844],
      ]) {
        await page.setViewportSize({ width, height });
        expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
        expect(await seriousAxeFindings(page)).toEqual([]);
        await app.screenshot(`purchase-return-reserved-${width}`, page);
      }

      // the item is rejected elsewhere: its 2 credits are free again, and the notice follows the card
      await releaseReservation(testKnex(), { reservationId: held.id, reason: 'rejected' });
      await card.locator('.balance-amount').getByText('17').waitFor();
      await notice.getByText('You now have 17 credits available.').waitFor();
      expect(await card.getByText('reserved for items waiting for approval').count()).toBe(0);
      expect(failed).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
