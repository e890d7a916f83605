/**
 * Trace ids in the Activity view (issue 46), in Chromium at desktop and phone sizes with axe: a job started with
 * tracing on keeps its trace id on its row; a site admin sees it in the job's details, linked to the trace viewer
 * (TRACE_VIEWER_URL), and the job's owner, who is no admin, does not. A job started with tracing off shows none.
 */
import { randomUUID } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';

const VIEWER = 'http://127.0.0.1:16686/trace/';
const SIZES = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];

/** A finished data export of `user`, recorded as its start writes it: with the trace id when tracing was on. */
async function exportJob(user: TestUser, sequence: number, traceId: string | null): Promise<void> {
  await testKnex()('data_exports').insert({
    id: randomUUID(),
    workspace_id: user.id,
    sequence,
    workflow_id: `export-${user.id}-${sequence}`,
    status: 'completed',
    progress: 100,
    trace_id: traceId,
  });
}

describe('trace ids in the Activity view', () => {
  let app: BrowserApp;
  let owner: TestUser;
  let admin: TestUser;
  const traceId = randomUUID().replace(/-/g, '');
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    app = await startBrowserApp({ config: () => ({ traceViewerUrl: VIEWER }) });
    owner = await createTestUser(app.baseUrl);
    admin = await createTestUser(app.baseUrl);
    await makeAdmin(testKnex(), admin.id);
    await exportJob(owner, 1, null);
    await exportJob(owner, 2, traceId);
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await app?.close();
    await closeTestKnex();
  });

  it('sends the trace id to site admins only, with its link to the viewer', async () => {
    const mine = await request<{ jobs: Array<{ item: string; traceId?: string; traceUrl?: string }> }>(app.baseUrl, '/api/jobs', { token: owner.token });
    expect(mine.status).toBe(200);
    expect(mine.body.jobs.map((job) => job.item).sort()).toEqual(['Data export #1', 'Data export #2']);
    for (const job of mine.body.jobs) expect(job).not.toHaveProperty('traceId');

    const all = await request<{ jobs: Array<{ userId: string; item: string; traceId?: string; traceUrl?: string }> }>(app.baseUrl, '/api/jobs?all=1', { token: admin.token });
    const owners = all.body.jobs.filter((job) => job.userId === owner.id);
    expect(owners.find((job) => job.item === 'Data export #2')).toMatchObject({ traceId, traceUrl: `${VIEWER}${traceId}` });
    const untraced = owners.find((job) => job.item === 'Data export #1');
    expect(untraced).not.toHaveProperty('traceId');
    expect(untraced).not.toHaveProperty('traceUrl');
  });

  describe.each(SIZES)('at $width x $height', ({ name, width, height }) => {
    it("shows an admin the job's trace id linked to the trace viewer, and nothing for a job traced off", async () => {
      const { page, errors } = await pageAs(app, admin, { width, height }, contexts);
      await page.goto('/?view=activity');
      await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
      await page.getByRole('checkbox', { name: 'All users' }).check();

      const traced = page.getByRole('listitem', { name: 'Data export: Data export #2' }).filter({ hasText: owner.email });
      await traced.waitFor();
      const link = traced.getByRole('link', { name: new RegExp(traceId) });
      expect(await link.getAttribute('href')).toBe(`${VIEWER}${traceId}`);
      expect(await link.getAttribute('target')).toBe('_blank');
      await traced.getByText('Trace', { exact: true }).waitFor();

      const untraced = page.getByRole('listitem', { name: 'Data export: Data export #1' }).filter({ hasText: owner.email });
      await untraced.waitFor();
      expect(await untraced.getByText('Trace', { exact: true }).count()).toBe(0);

      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await app.screenshot(`activity-trace-admin-${name}`, page);
      expect(errors).toEqual([]);
    });

    it("shows the job's owner no trace id", async () => {
      const { page, errors } = await pageAs(app, owner, { width, height }, contexts);
      await page.goto('/?view=activity');
      await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
      const traced = page.getByRole('listitem', { name: 'Data export: Data export #2' });
      await traced.waitFor();
      await traced.getByText('Duration').waitFor();
      expect(await traced.getByText('Trace', { exact: true }).count()).toBe(0);
      expect(await page.getByText(traceId).count()).toBe(0);
      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      expect(errors).toEqual([]);
    });
  });
});
