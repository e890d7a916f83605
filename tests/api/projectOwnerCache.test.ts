import knexFactory, { type Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { connectDatabase } from '../../db/connection';
import * as ownerNotify from '../../db/migrations/20261126000100_project_owner_notify';
import { createContentServices } from '../../services/content/contentServices';
import { createProjectOwnerCache, type ProjectOwnerCache } from '../../services/content/projectOwnerCache';
import { ProjectNotFoundError, type ProjectService } from '../../services/content/projects';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { listenApplicationName } from '../../services/platform/listenConnection';

/**
 * The ownership check of the content listing answers from an in-process cache of project owners. It must stay exact:
 * a project deleted (or handed to another user) by any process or code path, committed before a check begins, is
 * never answered as owned. `elsewhere` is a pool of its own that stands for another API process, a worker or psql.
 */
let knex: Knex;
let elsewhere: Knex;
let owners: ProjectOwnerCache;
let projects: ProjectService;
let app: TestServer;

const databaseUrl = () => process.env.DATABASE_URL as string;

async function newProject(user: Pick<TestUser, 'id'>, name = 'Harbour View'): Promise<string> {
  const [row] = await elsewhere('projects').insert({ workspace_id: user.id, name }).returning<Array<{ id: string }>>('id');
  return row.id;
}

/** Checks the project is owned, and that the answer came from memory (no read). */
async function expectOwnedFromMemory(userId: string, projectId: string): Promise<void> {
  const before = owners.stats();
  await projects.assertOwned(userId, projectId);
  const after = owners.stats();
  expect([after.hits - before.hits, after.misses - before.misses]).toEqual([1, 0]);
}

/** Reads the project's owner into the cache, and checks the next check is answered from it. */
async function warm(userId: string, projectId: string): Promise<void> {
  await projects.assertOwned(userId, projectId);
  await expectOwnedFromMemory(userId, projectId);
}

const deleteElsewhere = (projectId: string) => elsewhere.raw('delete from projects where id = ?', [projectId]);

const refused = (userId: string, projectId: string) => expect(projects.assertOwned(userId, projectId)).rejects.toBeInstanceOf(ProjectNotFoundError);

/**
 * Warms the project's entry and deletes the project in plain SQL elsewhere: the check begun the moment that commit
 * returns, before this process can have read the note by itself, refuses it.
 */
async function deletedElsewhereIsRefused(userId: string, projectId: string): Promise<void> {
  await warm(userId, projectId);
  await deleteElsewhere(projectId);
  await refused(userId, projectId);
}

beforeAll(async () => {
  elsewhere = connectDatabase(databaseUrl(), { min: 0, max: 4 });
  // opened last, so the objection models (Project.knex(), what assertOwned reads through) use the app's pool
  knex = testKnex();
  owners = createProjectOwnerCache({ databaseUrl: databaseUrl(), logger, reconnectMs: 50 });
  const config = loadConfig();
  app = await serve(createApp({ config, knex, logger, projectOwners: owners }));
  // the services the app's routers use are built the same way (contentServicesFor passes AppDeps.projectOwners)
  projects = createContentServices({ config, logger, projectOwners: owners }).projects;
  await owners.ready();
});

afterAll(async () => {
  await app.close();
  await Promise.all([owners.close(), elsewhere.destroy(), closeTestKnex()]);
});

describe('project owner cache', () => {
  it('answers an owned project from memory, whatever the case of the ids', async () => {
    const user = await createTestUser(app.baseUrl);
    const projectId = await newProject(user);
    const before = owners.stats();
    await projects.assertOwned(user.id, projectId);
    expect(owners.stats().misses - before.misses).toBe(1);
    for (let i = 0; i < 5; i += 1) await expectOwnedFromMemory(user.id, projectId);
    // uuids compare as uuids, as the query did
    await expectOwnedFromMemory(user.id.toUpperCase(), projectId.toUpperCase());
  });

  it("refuses another user's id, and never keeps a project that is not there", async () => {
    const owner = await createTestUser(app.baseUrl);
    const stranger = await createTestUser(app.baseUrl);
    const projectId = await newProject(owner);
    await projects.assertOwned(owner.id, projectId);
    const before = owners.stats();
    await refused(stranger.id, projectId);
    // answered from the owner's entry, not read again
    expect(owners.stats().hits - before.hits).toBe(1);
    await expectOwnedFromMemory(owner.id, projectId);

    const unknown = '00000000-0000-4000-8000-000000000000';
    const missesBefore = owners.stats().misses;
    await refused(owner.id, unknown);
    await refused(owner.id, unknown);
    expect(owners.stats().misses - missesBefore).toBe(2);
    // not a uuid: refused before the cache
    await refused(owner.id, 'not-a-uuid');
    expect(owners.stats().misses - missesBefore).toBe(2);
  });

  it('a project deleted in plain SQL elsewhere is refused by the very next check', async () => {
    const user = await createTestUser(app.baseUrl);
    for (let i = 0; i < 40; i += 1) {
      const projectId = await newProject(user, `Gone ${i}`);
      await deletedElsewhereIsRefused(user.id, projectId);
    }
  });

  it('a project handed to another user in plain SQL is refused to its former owner at once', async () => {
    const first = await createTestUser(app.baseUrl);
    const second = await createTestUser(app.baseUrl);
    const projectId = await newProject(first);
    await warm(first.id, projectId);
    await elsewhere.raw('update projects set workspace_id = ? where id = ?', [second.id, projectId]);
    await refused(first.id, projectId);
    await warm(second.id, projectId);
  });

  it('a project removed with its user (the cascade) is refused at once', async () => {
    const user = await createTestUser(app.baseUrl);
    const projectIds = [await newProject(user, 'One'), await newProject(user, 'Two')];
    for (const projectId of projectIds) {
      await warm(user.id, projectId);
    }
    // users -> profiles -> projects, all by ON DELETE CASCADE
    await elsewhere('users').where({ id: user.id }).delete();
    for (const projectId of projectIds) await refused(user.id, projectId);
  });

  it('a TRUNCATE of projects drops every entry (in a database of its own: the shared one keeps its projects)', async () => {
    const name = `${new URL(databaseUrl()).pathname.slice(1)}_truncate`;
    await elsewhere.raw(`drop database if exists "${name}" with (force)`);
    await elsewhere.raw(`create database "${name}"`);
    const url = new URL(databaseUrl());
    url.pathname = `/${name}`;
    // a plain pool: connectDatabase would bind the objection models to it
    const db = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 2 } });
    const cache = createProjectOwnerCache({ databaseUrl: url.toString(), logger, reconnectMs: 50 });
    try {
      // just what the trigger needs, then the migration itself, then the owner column under its current name (a rename
      // keeps the trigger, as 20261201000100_workspace_id_columns does)
      await db.raw('create table projects (id uuid primary key default gen_random_uuid(), user_id uuid not null)');
      await ownerNotify.up(db);
      await db.raw('alter table projects rename column user_id to workspace_id');
      await cache.ready();
      const userId = '11111111-1111-4111-8111-111111111111';
      const ids = (await db('projects').insert([{ workspace_id: userId }, { workspace_id: userId }]).returning<Array<{ id: string }>>('id')).map((r) => r.id);
      for (const id of ids) expect(await cache.ownerOf(db, id)).toBe(userId);
      const warm = cache.stats();
      for (const id of ids) expect(await cache.ownerOf(db, id)).toBe(userId);
      expect(cache.stats().hits - warm.hits).toBe(2);

      await db.raw('truncate projects');
      for (const id of ids) expect(await cache.ownerOf(db, id)).toBeNull();

      // down() takes the triggers and the function away
      await ownerNotify.down(db);
      const left = await db.raw(`select count(*)::int as n from pg_trigger where tgrelid = 'projects'::regclass and not tgisinternal`);
      expect(left.rows[0].n).toBe(0);
      expect((await db.raw(`select count(*)::int as n from pg_proc where proname = 'rs_projects_changed'`)).rows[0].n).toBe(0);
    } finally {
      await cache.close();
      await db.destroy();
      await elsewhere.raw(`drop database if exists "${name}" with (force)`);
    }
  });

  it('after its LISTEN connection is killed it reads the database, then caches again once back', async () => {
    const user = await createTestUser(app.baseUrl);
    const kept = await newProject(user, 'Kept');
    const doomed = await newProject(user, 'Doomed');
    for (const projectId of [kept, doomed]) {
      await warm(user.id, projectId);
    }
    // with a timeout, pg_terminate_backend returns once the backend is gone
    const killed = await elsewhere.raw(
      `select pg_terminate_backend(pid, 5000) as done from pg_stat_activity where application_name = ? and datname = current_database()`,
      [listenApplicationName('project owner cache')],
    );
    expect(killed.rows.map((r: { done: boolean }) => r.done)).toEqual([true]);
    // what was held before is not trusted: read again (down, or back and started over)
    const blind = owners.stats();
    await projects.assertOwned(user.id, kept);
    expect(owners.stats().misses - blind.misses).toBe(1);
    // a change while the cache is (or is becoming) blind
    await deleteElsewhere(doomed);
    await refused(user.id, doomed);

    // until it listens again, however long reconnecting takes on a busy machine (the bound only ends a hang)
    for (const deadline = Date.now() + 45_000; !owners.stats().listening && Date.now() < deadline; ) {
      await projects.assertOwned(user.id, kept);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(owners.stats().listening).toBe(true);
    // reconnecting started from nothing: one read, then memory again, and notes are heard again
    await deletedElsewhereIsRefused(user.id, kept);
  });

  it("GET /api/projects/:id/content answers the owner from memory, and 404 once the project is deleted in plain SQL", async () => {
    const user = await createTestUser(app.baseUrl);
    const stranger = await createTestUser(app.baseUrl);
    const projectId = await newProject(user);
    const path = `/api/projects/${projectId}/content`;
    const first = await request<{ success: boolean; content: unknown[] }>(app.baseUrl, path, { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, error: null, content: [] });
    const before = owners.stats();
    for (let i = 0; i < 3; i += 1) expect((await request(app.baseUrl, path, { token: user.token })).status).toBe(200);
    // two lookups per request, both from memory: the workspace the project names (api/workspace.ts) and the
    // listing's ownership check in that workspace
    expect(owners.stats().hits - before.hits).toBe(6);
    expect(owners.stats().misses).toBe(before.misses);
    expect((await request(app.baseUrl, path, { token: stranger.token })).status).toBe(404);

    await deleteElsewhere(projectId);
    // the listing itself is still reused for a few seconds: the ownership check in front of it refuses
    const gone = await request<{ code?: string }>(app.baseUrl, path, { token: user.token });
    expect(gone.status).toBe(404);
  });
});
