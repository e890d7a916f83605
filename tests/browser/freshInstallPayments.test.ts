/**
 * Payments on a fresh install: the real `npm start` (scripts/start.js) with no Stripe key, NODE_ENV development and
 * an empty DATA_DIR runs its local test-mode checkout (devStripe/) beside the API and a worker. In Chromium a newcomer
 * signs up, makes an image, finds Reject locked with the way to unlock it, buys a package on the checkout page
 * labelled "Test mode: no real payment", comes back credited through the signed webhook, rejects the pending item
 * and generates again. The same screens at 390x844; no serious or critical axe finding anywhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { seriousAxeFindings } from '../support/axe';
import { FRONTEND_DIST, launchChromium, watchForText } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { renderBytes } from '../imageEdit/harness';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as { freePort(): Promise<number> };

const ROOT = path.resolve(__dirname, '..', '..');
const TEST_MODE = 'Test mode: no real payment';
const PASSWORD = 'render-Studio-42';

let dataDir: string;
let start: { child: ChildProcess; output: () => string; exited: Promise<void> } | null = null;
let baseUrl: string;
let browser: Browser;

async function waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = start!.output().match(pattern);
    if (match) return match;
    if (start!.child.exitCode !== null) throw new Error(`npm start exited (${start!.child.exitCode}) before ${pattern}:\n${start!.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${start!.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  if (!fs.existsSync(path.join(FRONTEND_DIST, 'index.html'))) throw new Error('Build the front end first: npx vite build --config frontend/vite.config.ts');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-fresh-'));
  // mkdtemp makes it 700: as root, the embedded PostgreSQL would move its data out (tests/ops/embeddedPostgres700.test.ts)
  fs.chmodSync(dataDir, 0o755);
  // served from a copy: a front-end build elsewhere meanwhile cannot swap the lazily loaded chunks under the test
  const dist = path.join(dataDir, 'dist');
  fs.cpSync(FRONTEND_DIST, dist, { recursive: true });
  const [port, temporalPort, uiPort] = [await services.freePort(), await services.freePort(), await services.freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
    DATA_DIR: dataDir,
    FRONTEND_DIST: dist,
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
  };
  // a fresh install: no Stripe configuration at all, nothing generated yet (the run's PostgreSQL is used as it is)
  for (const name of Object.keys(env)) if (/^(STRIPE_|LOCAL_STRIPE)/.test(name)) delete env[name];
  for (const name of ['TEMPORAL_ADDRESS', 'STORAGE_DIR', 'TEST_WORKFLOW_BUNDLE_PATH', 'PUBLIC_URL', 'SIGNING_SECRET']) delete env[name];
  const child = spawn(process.execPath, ['scripts/start.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  start = { child, output: () => out, exited: new Promise((resolve) => child.once('exit', () => resolve())) };
  await waitForOutput(/Render studio: {2}http:\/\/127\.0\.0\.1:\d+/, 240_000);
  await waitForOutput(/"msg":"worker running"/, 240_000);
  baseUrl = `http://127.0.0.1:${port}`;
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (start && start.child.exitCode === null && start.child.signalCode === null) {
    process.kill(start.child.pid as number, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([start.exited, new Promise((r) => (timer = setTimeout(r, 60_000)))]);
    clearTimeout(timer);
    // still there after a minute: its whole process group goes
    if (start.child.exitCode === null && start.child.signalCode === null) process.kill(-(start.child.pid as number), 'SIGKILL');
  }
  // a process it started that outlived it must not hold the pipes (and jest) open
  start?.child.stdout?.destroy();
  start?.child.stderr?.destroy();
  await closeTestKnex();
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 90_000);

async function newPage(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport });
  return context.newPage();
}

async function expectClean(page: Page, what: string): Promise<void> {
  expect({ what, findings: await seriousAxeFindings(page) }).toEqual({ what, findings: [] });
  const fits = () => page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
  for (let i = 0; i < 10 && !(await fits()); i += 1) await page.waitForTimeout(100);
  expect({ what, fitsWidth: await fits() }).toEqual({ what, fitsWidth: true });
}

async function signUp(page: Page, email: string): Promise<void> {
  await page.goto('/?auth=signup');
  const dialog = page.getByRole('dialog', { name: 'Create your account' });
  await dialog.getByLabel('Full name').fill('Nova Newcomer');
  await dialog.getByLabel('Email').fill(email);
  await dialog.getByLabel('Password').fill(PASSWORD);
  await dialog.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}

/** A project with one render, made through the API with the browser's own session (as the upload screen does). */
async function projectWithRender(page: Page): Promise<{ projectId: string; renderId: string }> {
  const headers = { origin: baseUrl };
  const project = await page.request.post('/api/projects', { headers, data: { name: 'Harbour View' } });
  expect(project.status()).toBe(201);
  const projectId = ((await project.json()) as { project: { id: string } }).project.id;
  const upload = await page.request.post('/api/upload/renders', {
    headers,
    multipart: { projectId, file: { name: 'harbour.png', mimeType: 'image/png', buffer: await renderBytes(640, 480) } },
  });
  expect(upload.status()).toBe(200);
  return { projectId, renderId: ((await upload.json()) as { render: { data: { id: string } } }).render.data.id };
}

async function generateImage(page: Page, projectId: string, renderId: string, prompt: string): Promise<void> {
  await page.goto(`/?view=image-generation&project=${projectId}&render=${renderId}`);
  await page.getByRole('heading', { name: 'Enhanced AI Editor', level: 1 }).waitFor();
  await page.getByLabel('Describe how you want to transform the image').fill(prompt);
  const sent = await watchForText(page, 'Your image was sent for approval.', 90_000);
  await page.getByRole('button', { name: 'Generate Preview' }).click();
  await sent();
  await page.getByRole('heading', { name: 'Content Approvals', level: 1 }).waitFor();
}

async function profile(email: string): Promise<{ id: string; credits: number; reserved_credits: number; total_credits_purchased: number }> {
  return testKnex()('profiles').where({ email }).first('id', 'credits', 'reserved_credits', 'total_credits_purchased');
}

describe('a fresh npm start without Stripe keys', () => {
  it('says payments are test payments when it starts', () => {
    expect(start!.output()).toMatch(/Payments: {7}test mode, no real payment \(local checkout http:\/\/127\.0\.0\.1:\d+/);
    expect(start!.output()).toContain('starting the local test-mode checkout');
  });

  it('lets a newcomer buy in test mode, be credited through the signed webhook, reject, and generate again (1440x900)', async () => {
    const page = await newPage({ width: 1440, height: 900 });
    const email = `fresh-${Date.now()}@example.com`;
    await signUp(page, email);
    const { projectId, renderId } = await projectWithRender(page);

    await generateImage(page, projectId, renderId, 'a warm dusk light over the harbour');
    const card = page.locator('.approval-card');
    await card.waitFor();
    const reject = card.getByRole('button', { name: /^Reject/ });
    expect(await reject.isDisabled()).toBe(true);
    const lock = 'Rejections are disabled until you purchase a credit package. Buy any package under Account > Billing to reject items.';
    await page.locator('#main').getByText(lock).waitFor();
    await expectClean(page, 'approvals, rejection locked');

    // the lock's own way forward: buy
    await page.locator('#main').getByRole('button', { name: 'Buy credits' }).click();
    await page.getByRole('heading', { name: 'Credit packages' }).waitFor();
    const banner = page.getByRole('note').filter({ hasText: TEST_MODE });
    await banner.waitFor();
    expect(await banner.textContent()).toContain('paying adds the credits to your account without charging a card');
    const buy = page.getByRole('button', { name: 'Buy credits: Small Project' });
    expect(await buy.isEnabled()).toBe(true);
    expect(await page.locator(`#${await buy.getAttribute('aria-describedby')}`).textContent()).toContain(TEST_MODE);
    await expectClean(page, 'billing, test mode');
    await screenshot(page, 'fresh-billing-test-mode-desktop');

    await buy.click();
    await page.getByRole('heading', { name: 'Test-mode checkout', level: 1 }).waitFor();
    expect(new URL(page.url()).origin).not.toBe(baseUrl);
    await page.getByRole('note').filter({ hasText: TEST_MODE }).waitFor();
    await page.getByText('Pay NZD 287.50 for Small Project (12 credits)').waitFor();
    await expectClean(page, 'test-mode checkout page');
    await screenshot(page, 'fresh-checkout-desktop');
    await page.getByRole('button', { name: 'Pay', exact: true }).click();

    // back in the app, credited by the webhook (signed with the secret npm start made; the same path as production)
    await page.getByText('Purchase complete: +12 credits (Small Project).').waitFor({ timeout: 30_000 });
    const credited = await profile(email);
    expect(credited).toMatchObject({ credits: 17, reserved_credits: 1, total_credits_purchased: 12 });
    const purchase = await testKnex()('credit_purchases').where({ workspace_id: credited.id }).first('status', 'stripe_session_id');
    expect(purchase.status).toBe('completed');
    expect(await testKnex()('stripe_events').where('type', 'checkout.session.completed').whereRaw("payload::text like ?", [`%${purchase.stripe_session_id}%`]).count({ n: '*' })).toEqual([{ n: '1' }]);
    await expectClean(page, 'billing, purchase credited');

    // now Reject is there to use, and frees the item's credit
    await page.goto('/?view=approvals');
    await card.waitFor();
    await page.waitForFunction(() => !(globalThis as unknown as { document: { querySelector: (s: string) => { disabled: boolean } | null } }).document.querySelector('.approval-card button[aria-label^="Reject"]')?.disabled);
    expect(await page.locator('#main').getByText(lock).count()).toBe(0);
    await card.getByRole('button', { name: /^Reject/ }).click();
    await page.getByText('Item rejected. Its credits are available again.').waitFor({ timeout: 30_000 });
    await page.getByText('No pending approvals').waitFor();
    for (let i = 0; i < 150 && (await profile(email)).reserved_credits !== 0; i += 1) await new Promise((r) => setTimeout(r, 100));
    expect(await profile(email)).toMatchObject({ credits: 17, reserved_credits: 0 });

    // and generating goes on
    await generateImage(page, projectId, renderId, 'the same view at blue hour');
    await card.waitFor();
    expect(await card.count()).toBe(1);
    expect(await profile(email)).toMatchObject({ credits: 17, reserved_credits: 1 });
    await page.context().close();
  }, 240_000);

  it('shows the test-mode Buy area, checkout page and approval queue cleanly on a phone (390x844)', async () => {
    const page = await newPage({ width: 390, height: 844 });
    await signUp(page, `fresh-phone-${Date.now()}@example.com`);
    await page.goto('/?view=account&tab=billing');
    await page.getByRole('heading', { name: 'Credit packages' }).waitFor();
    await page.getByRole('note').filter({ hasText: TEST_MODE }).waitFor();
    await expectClean(page, 'billing on a phone');
    await screenshot(page, 'fresh-billing-test-mode-phone');

    await page.getByRole('button', { name: 'Buy credits: Medium Project' }).click();
    await page.getByRole('heading', { name: 'Test-mode checkout', level: 1 }).waitFor();
    await expectClean(page, 'checkout page on a phone');
    await screenshot(page, 'fresh-checkout-phone');
    // cancelled: back in the app, nothing bought
    await page.getByRole('link', { name: 'Cancel and return to the app' }).click();
    await page.getByRole('heading', { name: 'Credit packages' }).waitFor();
    await page.getByText('Checkout was cancelled. Nothing was charged.').waitFor();
    await expectClean(page, 'billing after a cancelled checkout on a phone');
    await page.context().close();
  }, 120_000);
});

/** Saves a full-page PNG under BROWSER_SCREENSHOTS_DIR (default: <tmp>/render-studio-screenshots). */
async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.BROWSER_SCREENSHOTS_DIR ?? path.join(os.tmpdir(), 'render-studio-screenshots');
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
