/**
 * A production installation without Stripe keys (NODE_ENV=production, no STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET):
 * the Buy buttons are disabled with the reason on screen before any click, the approval queue says how rejection
 * will unlock and offers no Buy button, and a user at the pending cap (or held by pending costs) is told only ways
 * forward that exist here. At 1440x900 and 390x844, with no serious or critical axe finding.
 */
import type { Page } from 'playwright-core';
import { BILLING_MSG } from '../../domain/billing';
import { createTestUser, type TestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { renderBytes } from '../imageEdit/harness';

const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

const UNAVAILABLE = `${BILLING_MSG.stripeNotConfigured}. The administrator of this installation can turn purchases on; until then, ask them if you need credits added to your account.`;
const REJECTION_UNLOCK =
  'Rejections are disabled until you purchase a credit package. Credit purchases are not available on this installation yet: rejecting unlocks once its administrator turns purchases on and you buy a package. Until then, save the items you want to keep; the others are released, with their credits, when their approval deadline passes.';

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp({ config: () => ({ nodeEnv: 'production', stripeSecretKey: '', stripeWebhookSecret: '', stripeApiBase: '' }) });
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

/** A 5-credit user with a project holding one render, signed in on a page of its own at `viewport`. */
async function signedIn(viewport: { width: number; height: number }): Promise<{ user: TestUser; page: Page; projectId: string; renderId: string }> {
  const user = await createTestUser(app.baseUrl);
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(await renderBytes(320, 240))], { type: 'image/png' }), 'harbour.png');
  const upload = await request<{ render: { data: { id: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect(upload.status).toBe(200);
  const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
  await useSession({ context, baseUrl: app.baseUrl }, user.token);
  return { user, page: await context.newPage(), projectId: project.body.project.id, renderId: upload.body.render.data.id };
}

async function fitsWidth(page: Page): Promise<boolean> {
  const fits = () => page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
  for (let i = 0; i < 10 && !(await fits()); i += 1) await page.waitForTimeout(100);
  return fits();
}

describe.each(VIEWPORTS)('production without Stripe keys ($name)', (viewport) => {
  it('disables Buy with the reason before any click, and the approval queue says how rejection unlocks (no Buy button)', async () => {
    const { user, page, projectId } = await signedIn(viewport);
    try {
      expect((await request(app.baseUrl, '/api/stripe/purchasing', { token: user.token })).body).toEqual({ success: true, data: { mode: 'unavailable' } });

      await page.goto('/?view=account&tab=billing');
      await page.getByRole('heading', { name: 'Credit packages' }).waitFor();
      await page.getByText(UNAVAILABLE).waitFor();
      for (const name of ['Small Project', 'Medium Project', 'Large Project']) {
        const buy = page.getByRole('button', { name: `Buy credits: ${name}` });
        await buy.waitFor();
        expect(await buy.isDisabled()).toBe(true);
        const describedBy = await buy.getAttribute('aria-describedby');
        expect(await page.locator(`#${describedBy}`).textContent()).toBe(UNAVAILABLE);
      }
      expect(await page.getByText('Test mode: no real payment').count()).toBe(0);
      expect(await fitsWidth(page)).toBe(true);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await app.screenshot(`purchasing-unavailable-billing-${viewport.name}`, page);

      await insertPendingApproval(testKnex(), { userId: user.id, projectId, contentType: 'image', cost: 1, reserve: true });
      await page.goto('/?view=approvals');
      const card = page.locator('.approval-card');
      await card.waitFor();
      const reject = card.getByRole('button', { name: /^Reject/ });
      expect(await reject.isDisabled()).toBe(true);
      await page.locator('#main').getByText(REJECTION_UNLOCK).first().waitFor();
      expect(await page.locator(`#${await reject.getAttribute('aria-describedby')}`).textContent()).toBe(REJECTION_UNLOCK);
      expect(await page.locator('#main').getByRole('button', { name: 'Buy credits' }).count()).toBe(0);
      // Save is the way forward here, and it is there to use
      expect(await card.getByRole('button', { name: /^Save/ }).isEnabled()).toBe(true);
      expect(await fitsWidth(page)).toBe(true);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await app.screenshot(`purchasing-unavailable-approvals-${viewport.name}`, page);
    } finally {
      await page.context().close();
    }
  });

  it('at the pending cap, or held by pending costs, offers only what exists here: save (no reject, no buying)', async () => {
    const { user, page, projectId, renderId } = await signedIn(viewport);
    try {
      // two pending images hold 2 of 5 credits: 3 are not enough for a clip, and no credits can be bought here
      for (let i = 0; i < 2; i += 1) await insertPendingApproval(testKnex(), { userId: user.id, projectId, contentType: 'image', cost: 1, reserve: true });
      await page.goto(`/?view=clip-generation&project=${projectId}&render=${renderId}`);
      const notice = page.getByRole('status').filter({ hasText: 'Your pending approvals reserve 2 credits' });
      await notice.waitFor();
      await notice.getByText('Review your pending items to continue.').waitFor();
      await notice.getByRole('button', { name: 'Review approvals' }).waitFor();
      expect(await notice.getByRole('button', { name: 'Add credits' }).count()).toBe(0);
      expect(await seriousAxeFindings(page)).toEqual([]);

      // five pending images: the cap
      for (let i = 0; i < 3; i += 1) await insertPendingApproval(testKnex(), { userId: user.id, projectId, contentType: 'image', cost: 1, reserve: true });
      await page.goto(`/?view=image-generation&project=${projectId}&render=${renderId}`);
      const overlay = page.getByRole('alertdialog', { name: 'Pending approvals limit reached' });
      await overlay.waitFor();
      await overlay
        .getByText(
          'You already have 5 pending approvals. The maximum is 5. Save items in Approvals to generate more. Rejecting needs a credit purchase, which this installation does not offer yet.',
        )
        .waitFor();
      expect(await overlay.getByText(/Save or reject/).count()).toBe(0);
      expect(await overlay.getByRole('button', { name: 'Buy credits' }).count()).toBe(0);
      expect(await fitsWidth(page)).toBe(true);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await app.screenshot(`purchasing-unavailable-cap-${viewport.name}`, page);

      await overlay.getByRole('button', { name: 'Open Approvals' }).click();
      await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
    } finally {
      await page.context().close();
    }
  });
});
