/**
 * The Webhooks page in the browser (issue 29, items 2 and 5), at 1440x900 and 390x844 with axe: an admin of a team
 * workspace registers an endpoint pointing at a receiver this test runs on 127.0.0.1, copies the signing secret
 * shown once, sends a test event from the page, and a member uploads a render and makes a clip of it; the
 * receiver verifies every request with the `standardwebhooks` library and the secret the page showed, and the page's
 * delivery log shows each delivery with its 2xx answer and, expanded by keyboard, the attempt with its bodies; a
 * delivery sent again is marked "Re-sent" and names what it re-sent. The URL hint says what the server accepts.
 * Deliveries go through the real relay, the per-endpoint workflow and its activities on a task queue of this file.
 * A member sees no Webhooks entry and gets the role note on the page's address.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { createWebhookDeliveryActivities } from '../../activities/webhookDelivery';
import { addCredits } from '../../services/billing/credits';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { DEFAULT_WEBHOOK_DELIVERY_SETTINGS } from '../../services/integrations/webhookDeliverySettings';
import { startWebhookRelay, type WebhookRelay } from '../../services/integrations/webhookRelay';
import { seriousAxeFindings } from '../support/axe';
import { openSidebar, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { clipTestConfig, renderJpeg, startClipWorker, type RunningWorker } from '../clips/fixtures';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { createTeamWorkspace, inWorkspace, joinWorkspace } from '../support/workspaces';
import type { TestUser } from '../support/accounts';

interface Received {
  id: string;
  type: string;
  verified: boolean;
  secret: string;
}

/** A receiver as a customer writes it: verifies each request with the secret it was given, answers 204 (401 if it does not verify). */
async function startReceiver() {
  const received: Received[] = [];
  const state = { secret: '' };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        new Webhook(state.secret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      const parsed = JSON.parse(body) as { type: string };
      received.push({ id: String(req.headers['webhook-id']), type: parsed.type, verified, secret: state.secret });
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { received, state, url: `http://127.0.0.1:${port}/hooks`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function eventually<T>(what: string, probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

describe('Webhooks page in the browser', () => {
  let app: BrowserApp;
  let relay: WebhookRelay;
  let temporal: Awaited<ReturnType<typeof testClient>>;
  let stopWorker: () => Promise<void>;
  let clipWorker: RunningWorker;
  const ourEndpoints = new Set<string>();
  const queue = uniqueTaskQueue('webhooks-browser');
  const clipQueue = uniqueTaskQueue('webhooks-browser-clips');

  beforeAll(async () => {
    app = await startBrowserApp({ taskQueues: { generation: clipQueue, media: clipQueue, approvals: clipQueue }, config: () => ({ videoPreset: clipTestConfig().videoPreset }) });
    clipWorker = await startClipWorker(clipQueue);
    const knex = testKnex();
    temporal = await testClient();
    const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
    const worker = await Worker.create({
      connection,
      taskQueue: queue,
      workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH as string },
      activities: createWebhookDeliveryActivities({ knex, config: loadConfig(), logger }, DEFAULT_WEBHOOK_DELIVERY_SETTINGS),
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
      await connection.close();
    };
    relay = startWebhookRelay({
      knex,
      databaseUrl: process.env.DATABASE_URL as string,
      client: temporal.client,
      taskQueue: queue,
      settings: DEFAULT_WEBHOOK_DELIVERY_SETTINGS,
      logger,
      accepts: (id) => ourEndpoints.has(id),
    });
    await relay.ready();
  }, 120_000);

  afterAll(async () => {
    await relay?.close();
    await stopWorker?.();
    await clipWorker?.stop();
    await temporal?.close();
    await app?.close();
    await closeTestKnex();
  });

  async function pageAs(user: TestUser, viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
    const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
    await context.addCookies([{ name: 'rs_session', value: user.token, url: app.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    return { page, errors };
  }

  /** The sidebar, opened from the menu button on a phone once the page has rendered. */
  async function sidebarOf(page: Page, viewport: { width: number }): Promise<void> {
    if (viewport.width < 768) await page.getByRole('button', { name: 'Open menu' }).click();
    await openSidebar(page);
  }

  async function noHorizontalScroll(page: Page): Promise<void> {
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
  }

  it.each(VIEWPORTS)('an admin registers an endpoint, sees the secret once, and sees a test event, a render upload and a finished clip delivered with 2xx ($name)', async (viewport) => {
    const team = await createTeamWorkspace(app.baseUrl, { name: `Hooks ${randomUUID().slice(0, 6)}` });
    const admin = await joinWorkspace(app.baseUrl, team, 'admin');
    const member = await joinWorkspace(app.baseUrl, team, 'member');
    const receiver = await startReceiver();
    try {
      const { page, errors } = await pageAs(admin, viewport);
      await page.goto(`/?workspace=${team.id}`);
      await sidebarOf(page, viewport);
      await page.getByRole('navigation', { name: 'Workspace' }).getByRole('button', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await page.getByText('No endpoints yet.').waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await noHorizontalScroll(page);

      // register: the URL, two event types by their checkboxes
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const form = page.getByRole('dialog', { name: 'Add endpoint' });
      // the hint says what this (development) server accepts: public https://, and http:// to loopback, which the receiver below uses
      const urlField = form.getByLabel('Endpoint URL');
      const hintId = (await urlField.getAttribute('aria-describedby'))!.split(' ')[0];
      await expect(form.locator(`[id="${hintId}"]`).textContent()).resolves.toBe(
        'A public https:// address your receiver answers on or, while developing, http:// to localhost, 127.0.0.1 or [::1].',
      );
      await urlField.fill('https://10.0.0.1/hooks');
      await form.getByRole('checkbox', { name: /render\.uploaded/ }).check();
      await form.getByRole('checkbox', { name: /job\.completed/ }).check();
      await form.getByRole('button', { name: 'Add endpoint' }).click();
      // a refused target says why, in the API's words
      await form.getByRole('alert').filter({ hasText: 'Webhooks can only be sent to public addresses: 10.0.0.1 is a private network address.' }).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await form.getByLabel('Endpoint URL').fill(receiver.url);
      await form.getByLabel('Description (optional)').fill('Listing site');
      await form.getByRole('button', { name: 'Add endpoint' }).click();

      // the secret, once
      const shown = page.getByRole('dialog', { name: 'Endpoint added' });
      await shown.waitFor();
      const secret = await shown.getByLabel('Signing secret').inputValue();
      expect(secret).toMatch(/^whsec_/);
      await shown.getByRole('button', { name: 'Copy secret' }).click();
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await shown.getByRole('button', { name: 'Done' }).click();
      receiver.state.secret = secret;
      const endpoint = await testKnex()('webhook_endpoints').where({ workspace_id: team.id }).first('id', 'event_types');
      expect(endpoint.event_types.sort()).toEqual(['job.completed', 'render.uploaded']);
      ourEndpoints.add(endpoint.id);
      const list = page.getByRole('list', { name: 'Endpoints' });
      await list.locator('.endpoint-url', { hasText: receiver.url }).waitFor();
      expect(await page.content()).not.toContain(secret);

      // Send test event: delivered, verified with the secret shown, 2xx in the log
      const log = page.getByRole('region', { name: `Deliveries to ${receiver.url}` });
      await log.getByText('Nothing sent yet.').waitFor();
      await log.getByRole('button', { name: 'Send test event' }).click();
      const test = await eventually('the test event at the receiver', () => receiver.received.find((r) => r.type === 'webhook.test'));
      expect(test.verified).toBe(true);
      const testRow = log.getByRole('button', { name: /webhook\.test/ });
      await testRow.filter({ hasText: 'Delivered (HTTP 204)' }).waitFor({ timeout: 30_000 });

      // real changes: a member uploads a render (render.uploaded) and makes a clip of it (job.completed when it is ready)
      await addCredits(testKnex(), { workspaceId: team.id, amount: 20, type: 'purchase', description: 'Team purchase', idempotencyKey: `hooks:${team.id}` });
      const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: member.token, json: { name: 'Quay' }, headers: inWorkspace(team.id) });
      const upload = new FormData();
      upload.append('projectId', project.body.project.id);
      upload.append('file', new Blob([new Uint8Array(await renderJpeg())], { type: 'image/jpeg' }), 'quay.jpg');
      const uploaded = await request<{ render: { data: { id: string; file_url: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: upload, token: member.token, headers: inWorkspace(team.id) });
      expect([200, 201]).toContain(uploaded.status);
      const render = uploaded.body.render.data;
      const clip = await request<{ jobId: string }>(app.baseUrl, '/api/video-generation/start', {
        token: member.token,
        headers: inWorkspace(team.id),
        json: {
          options: { imageUrl: render.file_url, movement: 'Zoom In', originalPrompt: 'Boats at the quay', duration: 5, platform: 'YouTube' },
          context: { projectId: project.body.project.id, userId: member.id, renderId: render.id, isTemporaryImage: false },
        },
      });
      expect(clip.status).toBe(200);
      const uploadedEvent = await eventually('render.uploaded at the receiver', () => receiver.received.find((r) => r.type === 'render.uploaded'));
      const change = await eventually('job.completed at the receiver', () => receiver.received.find((r) => r.type === 'job.completed'), 240_000);
      expect([uploadedEvent.verified, change.verified]).toEqual([true, true]);
      // the log follows without a reload: each recorded attempt comes through the workspace's event stream
      await log.getByRole('button', { name: /render\.uploaded/ }).filter({ hasText: 'Delivered (HTTP 204)' }).waitFor({ timeout: 30_000 });
      const changeRow = log.getByRole('button', { name: /job\.completed/ });
      await changeRow.filter({ hasText: 'Delivered (HTTP 204)' }).waitFor({ timeout: 30_000 });

      // expanded by keyboard: the attempt with its request body, and Send again
      await changeRow.focus();
      await page.keyboard.press('Enter');
      expect(await changeRow.getAttribute('aria-expanded')).toBe('true');
      const attempts = log.getByRole('list', { name: 'Attempts' });
      await attempts.getByText('Attempt 1').waitFor();
      await expect(attempts.getByLabel('Request body').first().textContent()).resolves.toContain('"job.completed"');
      expect(await seriousAxeFindings(page)).toEqual([]);
      await noHorizontalScroll(page);
      expect(await log.getByText('Re-sent', { exact: true }).count()).toBe(0);
      await log.getByRole('button', { name: 'Send again' }).click();
      await eventually('the event sent again', () => receiver.received.filter((r) => r.id === change.id).length === 2);
      expect(receiver.received.every((r) => r.verified)).toBe(true);
      // the log marks the re-send, and only it: the original stays as it was
      const resentRow = log.getByRole('button', { name: /job\.completed/ }).filter({ hasText: 'Re-sent' });
      await resentRow.filter({ hasText: 'Delivered (HTTP 204)' }).waitFor({ timeout: 30_000 });
      expect(await log.getByRole('button', { name: /job\.completed/ }).count()).toBe(2);
      expect(await log.getByText('Re-sent', { exact: true }).count()).toBe(1);
      await resentRow.click();
      await log.getByText(/^A re-send \("Send again"\) of the delivery of .+, with the same event id\.$/).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await noHorizontalScroll(page);
      expect(errors).toEqual([]);
      await app.screenshot(`webhooks-${viewport.name}`, page);
      await page.context().close();

      // a member: no entry in the sidebar, and the role note on the address
      const memberPage = await pageAs(member, viewport);
      await memberPage.page.goto(`/?workspace=${team.id}`);
      await sidebarOf(memberPage.page, viewport);
      await memberPage.page.getByRole('navigation', { name: 'Workspace' }).getByRole('button', { name: 'Members' }).waitFor();
      expect(await memberPage.page.getByRole('navigation', { name: 'Workspace' }).getByRole('button', { name: 'Webhooks' }).count()).toBe(0);
      await memberPage.page.goto(`/?workspace=${team.id}&view=webhooks`);
      await memberPage.page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await memberPage.page.getByRole('note').filter({ hasText: 'Only admins and owners manage webhooks.' }).waitFor();
      expect(await memberPage.page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
      await memberPage.page.context().close();
    } finally {
      await receiver.close();
    }
  }, 360_000);
});
