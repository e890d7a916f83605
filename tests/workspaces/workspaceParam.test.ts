/**
 * `?workspaceId=` names the workspace on every route that acts in one, as the X-Workspace-Id header does
 * (docs/api.md "Workspaces"; issue 41, item 6): the routes with strict query parameters refused it with 400
 * "Unknown field(s): workspaceId", so the links in webhook payloads (tests/webhooks/events.test.ts follows them all)
 * and in the docs failed. Every GET route of the OpenAPI document that acts in a workspace and has no path parameter
 * is called both ways by a team's owner: the same status, the same answer.
 */
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWorkspace, type TeamWorkspace } from '../support/workspaces';

let server: TestServer;
let team: TeamWorkspace;

beforeAll(async () => {
  server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger }));
  team = await createTeamWorkspace(server.baseUrl);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

type Operation = { 'x-workspace-action'?: string; responses?: Record<string, { content?: Record<string, unknown> }> };

/** GET routes that act in a workspace, need no path parameter and answer JSON (not the event stream). */
async function workspaceReads(): Promise<string[]> {
  const doc = await request<{ paths: Record<string, { get?: Operation }> }>(server.baseUrl, '/api/openapi.json');
  return Object.entries(doc.body.paths)
    .filter(([path, item]) => !path.includes('{') && item.get?.['x-workspace-action'] && item.get['x-workspace-action'] !== 'self')
    .filter(([, item]) => !Object.values(item.get?.responses ?? {}).some((r) => r.content && 'text/event-stream' in r.content))
    .map(([path]) => path);
}

/** What the two calls are compared on: the status and, without the fields that change from call to call, the body. */
function comparable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body ?? null, (key, value) => (['generatedAt', 'timestamp', 'serverTime', 'now'].includes(key) ? undefined : value)));
}

it('every workspace read answers ?workspaceId= as it answers X-Workspace-Id, and in the named workspace', async () => {
  const paths = await workspaceReads();
  // the routes the audit found refusing the parameter are among them
  expect(paths).toEqual(expect.arrayContaining(['/api/credits/summary', '/api/credits/limits', '/api/credits/can-create', '/api/credits/transactions', '/api/credits/weekly-usage', '/api/credits/spend-by-member', '/api/approvals/list', '/api/approvals/stats', '/api/stripe/purchases']));
  const differing: Array<{ path: string; header: number; param: number; paramError?: unknown }> = [];
  for (const path of paths) {
    const byHeader = await request(server.baseUrl, path, { token: team.owner.token, headers: { 'x-workspace-id': team.id } });
    const byParam = await request(server.baseUrl, `${path}?workspaceId=${team.id}`, { token: team.owner.token });
    if (byHeader.status !== byParam.status || JSON.stringify(comparable(byHeader.body)) !== JSON.stringify(comparable(byParam.body))) {
      differing.push({ path, header: byHeader.status, param: byParam.status, paramError: (byParam.body as { error?: unknown } | null)?.error });
    }
  }
  expect(differing).toEqual([]);
});

it("reads the named workspace, not the caller's personal one, and still refuses a workspace the caller is not in", async () => {
  const created = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: team.owner.token, headers: { 'x-workspace-id': team.id }, json: { name: 'Harbour View' } });
  expect(created.status).toBe(201);
  const listed = (query: string) => request<{ projects: Array<{ id: string }> }>(server.baseUrl, `/api/projects/list${query}`, { token: team.owner.token });
  expect((await listed(`?workspaceId=${team.id}`)).body.projects.map((p) => p.id)).toEqual([created.body.project.id]);
  expect((await listed('')).body.projects).toEqual([]);
  const outsider = await createTeamWorkspace(server.baseUrl);
  for (const path of ['/api/credits/summary', '/api/approvals/stats', '/api/stripe/purchases']) {
    expect({ path, status: (await request(server.baseUrl, `${path}?workspaceId=${team.id}`, { token: outsider.owner.token })).status }).toEqual({ path, status: 404 });
  }
});
