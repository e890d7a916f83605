import { randomUUID } from 'node:crypto';
import type { TestUser } from '../support/accounts';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { request, type TestServer } from '../support/http';
import { linkedFileExists } from '../support/objectStorage';
import { checkLedgerInvariant, getCreditSummary } from '../../services/billing/credits';
import { createProject, fetchBytes, newUser, pngBytes, startProjectsApp, uploadRender } from './fixtures';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

interface ProjectJson {
  id: string;
  user_id: string;
  name: string;
  address: string | null;
  created_at: string;
  thumbnail: string | null;
}

beforeAll(async () => {
  const app = await startProjectsApp();
  server = app.server;
  [alice, bob] = await Promise.all([newUser(server.baseUrl), newUser(server.baseUrl)]);
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

async function list(user: TestUser, query = ''): Promise<{ status: number; projects: ProjectJson[]; body: Record<string, unknown> }> {
  const res = await request<{ projects: ProjectJson[] }>(server.baseUrl, `/api/projects/list${query}`, { token: user.token });
  return { status: res.status, projects: res.body.projects, body: res.body as unknown as Record<string, unknown> };
}


describe('projects: create and list', () => {
  it('creates a project with a trimmed name and optional address, and lists only the owner\'s projects, newest first', async () => {
    const user = await newUser(server.baseUrl);
    const first = await request<{ project: ProjectJson }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: '  Harbour View  ', address: '1 Quay St' } });
    expect(first.status).toBe(201);
    expect(first.body.project).toMatchObject({ name: 'Harbour View', address: '1 Quay St', user_id: user.id, thumbnail: null });
    const second = await request<{ project: ProjectJson }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'No Address' } });
    expect(second.body.project.address).toBeNull();
    await createProject(server.baseUrl, bob, 'Bob only');

    const mine = await list(user);
    expect(mine.status).toBe(200);
    expect(mine.body.success).toBe(true);
    expect(mine.projects.map((p) => p.name)).toEqual(['No Address', 'Harbour View']);
  });

  it.each([
    [{}, 'Project name is required'],
    [{ name: '   ' }, 'Project name is required'],
    [{ name: 'x'.repeat(201) }, 'Project name must be at most 200 characters'],
  ])('refuses %j with 400', async (body, error) => {
    const res = await request(server.baseUrl, '/api/projects', { token: alice.token, json: body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
  });

  it('answers 401 without a session and 403 for another userId', async () => {
    expect((await request(server.baseUrl, '/api/projects/list')).status).toBe(401);
    expect((await list(alice, `?userId=${bob.id}`)).status).toBe(403);
    expect((await list(alice, `?userId=${alice.id}`)).status).toBe(200);
  });

  it("uses the oldest render's image as the project's thumbnail", async () => {
    const user = await newUser(server.baseUrl);
    const project = await createProject(server.baseUrl, user, 'Thumbs');
    const oldest = await uploadRender(server.baseUrl, user, project.id, { bytes: await pngBytes(64, 64, 1), fileName: 'first.png' });
    await uploadRender(server.baseUrl, user, project.id, { bytes: await pngBytes(64, 64, 2), fileName: 'second.png' });
    const [card] = (await list(user)).projects;
    expect(card.thumbnail).not.toBeNull();
    const expectedThumb = oldest.body.processingInfo?.thumbnailUrl as string;
    expect(new URL(card.thumbnail as string, 'http://x').pathname).toBe(new URL(expectedThumb, 'http://x').pathname);
    expect((await fetchBytes(server.baseUrl, card.thumbnail as string)).status).toBe(200);
  });
});

describe('projects: rename', () => {
  it('renames the name and address, refusing a blank name', async () => {
    const project = await createProject(server.baseUrl, alice, 'Before');
    const res = await request<{ project: ProjectJson }>(server.baseUrl, `/api/projects/${project.id}`, { method: 'PATCH', token: alice.token, json: { name: 'After', address: '2 Beach Rd' } });
    expect(res.status).toBe(200);
    expect(res.body.project).toMatchObject({ name: 'After', address: '2 Beach Rd' });
    const blank = await request(server.baseUrl, `/api/projects/${project.id}`, { method: 'PATCH', token: alice.token, json: { name: ' ' } });
    expect(blank.status).toBe(400);
    const get = await request<{ project: ProjectJson }>(server.baseUrl, `/api/projects/${project.id}`, { token: alice.token });
    expect(get.body.project.name).toBe('After');
  });
});

describe("projects: another user's project answers 404", () => {
  it.each([
    ['GET', ''],
    ['PATCH', ''],
    ['DELETE', ''],
    ['GET', '/content'],
    ['DELETE', `/compiled-videos/${randomUUID()}`],
  ])('%s /api/projects/:id%s', async (method, suffix) => {
    const project = await createProject(server.baseUrl, alice, 'Private');
    const res = await request(server.baseUrl, `/api/projects/${project.id}${suffix}`, { method, token: bob.token, json: method === 'PATCH' ? { name: 'Mine now' } : undefined });
    expect(res.status).toBe(404);
    const still = await request<{ project: ProjectJson }>(server.baseUrl, `/api/projects/${project.id}`, { token: alice.token });
    expect(still.body.project.name).toBe('Private');
  });

  it('answers 404 for an id that is not a UUID', async () => {
    expect((await request(server.baseUrl, '/api/projects/not-an-id', { token: alice.token })).status).toBe(404);
  });
});

describe('projects: delete', () => {
  it('deletes the project, its rows and its files in storage', async () => {
    const user = await newUser(server.baseUrl);
    const project = await createProject(server.baseUrl, user, 'Doomed');
    const up = await uploadRender(server.baseUrl, user, project.id, { bytes: await pngBytes(80, 60, 4), fileName: 'a.png' });
    const file = up.body.url as string;
    const thumb = up.body.processingInfo?.thumbnailUrl as string;
    expect(await linkedFileExists(file)).toBe(true);
    expect(await linkedFileExists(thumb)).toBe(true);

    const res = await request(server.baseUrl, `/api/projects/${project.id}`, { method: 'DELETE', token: user.token });
    expect(res.status).toBe(200);
    expect(await linkedFileExists(file)).toBe(false);
    expect(await linkedFileExists(thumb)).toBe(false);
    expect(await testKnex()('renders').where({ project_id: project.id })).toHaveLength(0);
    expect((await list(user)).projects).toHaveLength(0);
    expect((await fetchBytes(server.baseUrl, up.body.url as string)).status).toBe(404);
    expect((await request(server.baseUrl, `/api/projects/${project.id}`, { method: 'DELETE', token: user.token })).status).toBe(404);
  });

  it('gives back the credits its pending approvals hold', async () => {
    const user = await newUser(server.baseUrl);
    const project = await createProject(server.baseUrl, user, 'Has pending items');
    const kept = await createProject(server.baseUrl, user, 'Keeps its pending item');
    const knex = testKnex();
    const pendingItem = (projectId: string) => insertPendingApproval(knex, { userId: user.id, projectId, cost: 1, reserve: true });
    await pendingItem(project.id);
    await pendingItem(project.id);
    await pendingItem(kept.id);
    expect((await getCreditSummary(knex, user.id)).reservedCredits).toBe(3);

    const res = await request(server.baseUrl, `/api/projects/${project.id}`, { method: 'DELETE', token: user.token });
    expect(res.status).toBe(200);
    const summary = await getCreditSummary(knex, user.id);
    expect(summary).toMatchObject({ credits: 5, reservedCredits: 1, availableCredits: 4 });
    expect((await checkLedgerInvariant(knex, user.id)).ok).toBe(true);
    expect(await knex('credit_reservations').where({ workspace_id: user.id, status: 'active' })).toHaveLength(1);
  });

  it('bulk-deletes several projects, all or none', async () => {
    const user = await newUser(server.baseUrl);
    const [a, b, c] = [await createProject(server.baseUrl, user, 'A'), await createProject(server.baseUrl, user, 'B'), await createProject(server.baseUrl, user, 'C')];
    const foreign = await createProject(server.baseUrl, bob, 'Bob keeps this');

    const refused = await request(server.baseUrl, '/api/projects/bulk-delete', { token: user.token, json: { ids: [a.id, foreign.id] } });
    expect(refused.status).toBe(404);
    expect((await list(user)).projects).toHaveLength(3);
    expect((await list(bob)).projects.map((p) => p.id)).toContain(foreign.id);

    const empty = await request(server.baseUrl, '/api/projects/bulk-delete', { token: user.token, json: { ids: [] } });
    expect(empty.status).toBe(400);

    const done = await request(server.baseUrl, '/api/projects/bulk-delete', { token: user.token, json: { ids: [a.id, b.id] } });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ success: true, deleted: 2 });
    expect((await list(user)).projects.map((p) => p.id)).toEqual([c.id]);
  });
});
