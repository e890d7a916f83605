import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { connectDatabase } from '../../db/connection';
import { createContentChanges, type ContentChanges } from '../../services/content/contentChanges';
import { listenApplicationName } from '../../services/platform/listenConnection';
import { createTestUser, type TestUser } from '../support/accounts';
import { standStillDate } from '../support/clock';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

/**
 * Two API "processes" (two apps, each with its own library, so its own reused listings, and its own LISTEN connection
 * for content changes) on one database, and a third pool that stands for a worker or psql. A listing is reused for a
 * few seconds; a change committed through the other app or anywhere else is listed by the very next request of
 * either app, whole listing and first page alike, with no waiting. The reuse period is measured with Date.now(),
 * which stands still here (tests/support/clock.ts): a busy machine cannot let it lapse between two steps.
 */
let knex: Knex;
let elsewhere: Knex;
let changesA: ContentChanges;
let changesB: ContentChanges;
let a: TestServer;
let b: TestServer;
let user: TestUser;

const databaseUrl = () => process.env.DATABASE_URL as string;

interface Listed {
  content: Array<{ data: { id: string; file_name: string } }>;
}

async function listed(server: TestServer, projectId: string, query = ''): Promise<string[]> {
  const res = await request<Listed>(server.baseUrl, `/api/projects/${projectId}/content${query}`, { token: user.token });
  if (res.status !== 200) throw new Error(`listing answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.content.map((item) => item.data.file_name).sort();
}

/** Both apps, whole listing and first page, list exactly `names`. */
async function bothList(projectId: string, names: string[]): Promise<void> {
  for (const server of [a, b]) {
    expect(await listed(server, projectId)).toEqual(names);
    expect(await listed(server, projectId, '?limit=50')).toEqual(names);
  }
}

/** Counts the statements that read a content table while `run` runs (both apps read through the models' pool). */
async function tableReads(run: () => Promise<unknown>): Promise<number> {
  let reads = 0;
  const onQuery = (q: { sql: string }) => {
    if (/from "(renders|images|clips|compiled_videos|generated_content)"/.test(q.sql)) reads += 1;
  };
  knex.client.on('query', onQuery);
  try {
    await run();
    return reads;
  } finally {
    knex.client.removeListener('query', onQuery);
  }
}

async function newProject(name: string): Promise<string> {
  const [row] = await elsewhere('projects').insert({ workspace_id: user.id, name }).returning<Array<{ id: string }>>('id');
  return row.id;
}

async function addImage(projectId: string, name: string): Promise<string> {
  const [row] = await elsewhere('images')
    .insert({ project_id: projectId, workspace_id: user.id, file_url: `/api/files/images/${user.id}/${name}.png`, file_name: name })
    .returning<Array<{ id: string }>>('id');
  return row.id;
}

beforeAll(async () => {
  // before the apps are made: their libraries read the clock they find
  standStillDate();
  elsewhere = connectDatabase(databaseUrl(), { min: 0, max: 4 });
  // opened last, so the objection models (what the library reads through) use this pool
  knex = testKnex();
  changesA = createContentChanges({ databaseUrl: databaseUrl(), logger, reconnectMs: 50 });
  changesB = createContentChanges({ databaseUrl: databaseUrl(), logger, reconnectMs: 50 });
  a = await serve(createApp({ config: loadConfig(), knex, logger, contentChanges: changesA }));
  b = await serve(createApp({ config: loadConfig(), knex, logger, contentChanges: changesB }));
  await Promise.all([changesA.ready(), changesB.ready()]);
  user = await createTestUser(a.baseUrl);
});

afterAll(async () => {
  await a.close();
  await b.close();
  await Promise.all([changesA.close(), changesB.close(), elsewhere.destroy()]);
  await closeTestKnex();
  jest.useRealTimers();
});

describe('the content listing reuse across API processes', () => {
  it('still reuses a listing nothing changed', async () => {
    const projectId = await newProject('Reused');
    await addImage(projectId, 'first');
    await bothList(projectId, ['first']);
    expect(await tableReads(() => bothList(projectId, ['first']))).toBe(0);
  });

  it('a rename through one app is listed by the other at once', async () => {
    const projectId = await newProject('Renamed');
    const imageId = await addImage(projectId, 'before');
    await bothList(projectId, ['before']);
    const renamed = await request(b.baseUrl, `/api/projects/${projectId}/content/images/${imageId}`, { method: 'PATCH', token: user.token, json: { name: 'after' } });
    expect(renamed.status).toBe(200);
    // A kept 'before' and never heard of the rename from its own code
    await bothList(projectId, ['after']);
  });

  it('a removal through one app is listed by the other at once', async () => {
    const projectId = await newProject('Removed');
    const doomed = await addImage(projectId, 'doomed');
    await addImage(projectId, 'kept');
    await bothList(projectId, ['doomed', 'kept']);
    const removed = await request(a.baseUrl, `/api/projects/${projectId}/content/images/${doomed}`, { method: 'DELETE', token: user.token });
    expect(removed.status).toBe(200);
    expect(await listed(b, projectId)).toEqual(['kept']);
    expect(await listed(b, projectId, '?limit=50')).toEqual(['kept']);
  });

  it('rows written elsewhere (a worker saving an approved item, plain SQL) are listed by both at once', async () => {
    const projectId = await newProject('Elsewhere');
    await bothList(projectId, []);
    for (let i = 0; i < 20; i += 1) {
      await addImage(projectId, `item ${String(i).padStart(2, '0')}`);
      await bothList(projectId, Array.from({ length: i + 1 }, (_, n) => `item ${String(n).padStart(2, '0')}`));
    }
    await elsewhere('images').where({ project_id: projectId }).delete();
    await bothList(projectId, []);
  });

  it('keeps nothing while the changes cannot be heard, and reuses again once they can', async () => {
    const projectId = await newProject('Deaf');
    await addImage(projectId, 'first');
    await bothList(projectId, ['first']);
    // both apps' LISTEN connections end (one process here, so one name for both)
    const killed = await elsewhere.raw(`select pg_terminate_backend(pid, 5000) as done from pg_stat_activity where application_name = ? and datname = current_database()`, [
      listenApplicationName('content listing cache'),
    ]);
    expect(killed.rows.map((r: { done: boolean }) => r.done)).toEqual([true, true]);
    await addImage(projectId, 'second');
    // whatever each app had is not trusted: read again, whether the connection is still down or back and started over
    await bothList(projectId, ['first', 'second']);
    await Promise.all([changesA.ready(), changesB.ready()]);
    await bothList(projectId, ['first', 'second']);
    expect(await tableReads(() => bothList(projectId, ['first', 'second']))).toBe(0);
    await addImage(projectId, 'third');
    await bothList(projectId, ['first', 'second', 'third']);
  });
});
