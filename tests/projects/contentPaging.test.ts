import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, type TestServer } from '../support/http';
import { pageRowsQuery } from '../../services/content/library';
import { createProject, newUser, startProjectsApp } from './fixtures';

let server: TestServer;
let knex: Knex;
let user: TestUser;

interface Item {
  type: string;
  source: string;
  data: { id: string; name: string; created_at: string };
  signed_url: string | null;
}
interface Page {
  success: boolean;
  content: Item[];
  nextCursor: string | null;
  error?: string;
  code?: string;
}

beforeAll(async () => {
  server = (await startProjectsApp()).server;
  knex = testKnex();
  user = await newUser(server.baseUrl);
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

const key = (item: Item): string => `${item.source}:${item.data.id}`;

async function wholeListing(projectId: string): Promise<Item[]> {
  const res = await request<{ content: Item[] }>(server.baseUrl, `/api/projects/${projectId}/content?refresh=1`, { token: user.token });
  expect(res.status).toBe(200);
  return res.body.content;
}

async function page(projectId: string, query: string, as: TestUser = user): Promise<{ status: number; body: Page }> {
  const res = await request<Page>(server.baseUrl, `/api/projects/${projectId}/content?${query}`, { token: as.token });
  return { status: res.status, body: res.body };
}

/** Follows nextCursor from the first page to the last, checking each page's size. */
async function allPages(projectId: string, limit: number): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await page(projectId, `limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    pages++;
    if (res.body.nextCursor) expect(res.body.content).toHaveLength(limit);
    items.push(...res.body.content);
    cursor = res.body.nextCursor;
    if (pages > 1000) throw new Error('the cursor never ends');
  } while (cursor);
  return { items, pages };
}

/** A content row; `at` is a PostgreSQL timestamp text so microseconds can be given. */
function row(table: string, projectId: string, name: string, at: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const bucket = table === 'compiled_videos' ? 'videos' : table === 'generated_content' ? 'images' : table;
  return { project_id: projectId, workspace_id: user.id, file_url: `/api/files/${bucket}/${user.id}/${name}.bin`, file_name: name, created_at: at, ...extra };
}

const TABLE_EXTRA: Record<string, (i: number) => Record<string, unknown>> = {
  renders: () => ({ aspect_ratio: '16:9' }),
  images: () => ({ aspect_ratio: '1:1' }),
  clips: () => ({ analysis_data: { aspectRatio: '9:16' } }),
  compiled_videos: (i) => ({ editing_data: { status: i % 5 === 0 ? 'draft' : 'approved', aspect_ratio: '16:9' } }),
  generated_content: (i) => ({ content_type: i % 2 ? 'image' : 'video' }),
};

/**
 * 300 rows across the five tables. Many share a second, and groups share a millisecond with different microseconds,
 * so the order rests on the millisecond the items show and then on the id, as the whole listing orders them.
 */
async function seedMixed(projectId: string, count = 300): Promise<void> {
  const tables = Object.keys(TABLE_EXTRA);
  const byTable: Record<string, Array<Record<string, unknown>>> = {};
  for (let i = 0; i < count; i++) {
    const table = tables[(i * 7) % tables.length];
    const second = String(Math.floor(i / 6) % 60).padStart(2, '0');
    const minute = String(Math.floor(i / 360)).padStart(2, '0');
    const ms = String((i % 3) * 100).padStart(3, '0');
    const micro = String((i * 37) % 1000).padStart(3, '0');
    const rows = (byTable[table] ??= []);
    rows.push(row(table, projectId, `${table}-${i}`, `2026-02-01 10:${minute}:${second}.${ms}${micro}+00`, TABLE_EXTRA[table](rows.length)));
  }
  for (const [table, rows] of Object.entries(byTable)) await knex.batchInsert(table, rows, 200);
}

describe('GET /api/projects/:id/content?limit=&cursor= (paged listing)', () => {
  it("pages through 300 mixed items exactly once each, in the whole listing's order", async () => {
    const project = await createProject(server.baseUrl, user, 'Paged library');
    await seedMixed(project.id);
    const whole = await wholeListing(project.id);
    // unapproved compiled videos are left out: 300 rows, 12 of them drafts
    expect(whole).toHaveLength(288);
    expect(new Set(whole.map((i) => i.type))).toEqual(new Set(['render', 'ai_image', 'clip', 'compiled_video', 'generated_image']));

    for (const limit of [1, 7, 100, 200]) {
      const { items, pages } = await allPages(project.id, limit);
      expect(items.map(key)).toEqual(whole.map(key));
      expect(pages).toBe(Math.ceil(288 / limit));
    }
    // a page holds the same item shape as the whole listing (links compared without their expiry and signature: the
    // two reads may fall on either side of an expiry step, which moves both)
    const unsigned = (items: unknown) => JSON.parse(JSON.stringify(items).replace(/expires=\d+&sig=[A-Za-z0-9_-]+/g, 'expires=E&sig=S')) as unknown;
    const first = await page(project.id, 'limit=5');
    expect(unsigned(first.body.content)).toEqual(unsigned(whole.slice(0, 5)));
  });

  it('pages with the default size of 100 when only a cursor is given, and with a cursor alone continues', async () => {
    const project = await createProject(server.baseUrl, user, 'Default page size');
    await seedMixed(project.id, 250);
    const whole = await wholeListing(project.id);
    const first = await page(project.id, 'limit=100');
    expect(first.body.content.map(key)).toEqual(whole.slice(0, 100).map(key));
    const second = await page(project.id, `cursor=${first.body.nextCursor}`);
    expect(second.status).toBe(200);
    expect(second.body.content.map(key)).toEqual(whole.slice(100, 200).map(key));
    const third = await page(project.id, `cursor=${second.body.nextCursor}`);
    expect(third.body.content.map(key)).toEqual(whole.slice(200).map(key));
    expect(third.body.nextCursor).toBeNull();
  });

  it('neither repeats nor skips other items when items are added or deleted between pages', async () => {
    const project = await createProject(server.baseUrl, user, 'Changing library');
    await seedMixed(project.id, 260);
    const before = await wholeListing(project.id);

    const first = await page(project.id, 'limit=40&refresh=1');
    expect(first.body.content.map(key)).toEqual(before.slice(0, 40).map(key));
    const seen = [...first.body.content];

    // between pages: a new newest item, a new item in the middle of what is still to come, the item the cursor
    // points at and one further down are deleted
    const lastOnPage = before[39];
    const laterGone = before[150];
    // the first item of its millisecond further down: an item added at that millisecond with the highest id goes right before it
    const middleIndex = before.findIndex((item, i) => i > 100 && i < 140 && item.data.created_at !== before[i - 1].data.created_at);
    const middle = before[middleIndex];
    await knex('renders').insert(row('renders', project.id, 'added-newest', '2026-03-01 00:00:00+00'));
    const [addedMiddle] = await knex('images')
      .insert(row('images', project.id, 'added-middle', new Date(Date.parse(middle.data.created_at)).toISOString(), { id: 'ffffffff-ffff-4fff-bfff-ffffffffffff' }))
      .returning('id');
    for (const gone of [lastOnPage, laterGone]) {
      const res = await request(server.baseUrl, `/api/projects/${project.id}/content/${gone.source}/${gone.data.id}`, { method: 'DELETE', token: user.token });
      expect(res.status).toBe(200);
    }

    let cursor = first.body.nextCursor;
    while (cursor) {
      const next = await page(project.id, `limit=40&cursor=${cursor}`);
      expect(next.status).toBe(200);
      seen.push(...next.body.content);
      cursor = next.body.nextCursor;
    }
    const keys = seen.map(key);
    expect(new Set(keys).size).toBe(keys.length);
    // every item present before stays in order, except the one deleted further down; the middle addition
    // (same millisecond as `middle`, the highest id) comes right before it; the newest addition was before the cursor
    const expected = before.filter((i) => i !== laterGone).map(key);
    expected.splice(expected.indexOf(key(middle)), 0, `images:${addedMiddle.id}`);
    expect(keys).toEqual(expected);
  });

  it('reaches every item, past the whole listing\'s 500-per-table cut', async () => {
    const project = await createProject(server.baseUrl, user, 'Many renders');
    const rows = Array.from({ length: 520 }, (_, i) => row('renders', project.id, `r-${i}`, new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()));
    await knex.batchInsert('renders', rows, 200);
    const whole = await wholeListing(project.id);
    expect(whole).toHaveLength(500);
    const { items } = await allPages(project.id, 200);
    expect(items).toHaveLength(520);
    expect(items.slice(0, 500).map(key)).toEqual(whole.map(key));
    expect(items[519].data.name).toBe('r-0');
  });

  it('reads a page as a range of the listing-order index: limit + 1 rows per table, however many the project holds', async () => {
    const project = await createProject(server.baseUrl, user, 'Indexed pages');
    const rows = Array.from({ length: 3000 }, (_, i) => row('renders', project.id, `ix-${i}`, new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString()));
    await knex.batchInsert('renders', rows, 500);
    await knex.raw('analyze renders');
    const middle = (await allPages(project.id, 200)).items[1500];
    for (const after of [null, { at: middle.data.created_at, id: middle.data.id }]) {
      const { sql, bindings } = pageRowsQuery(knex, 'renders', project.id, 101, after).toSQL();
      const [{ 'QUERY PLAN': [plan] }] = (await knex.raw(`explain (analyze, format json) ${sql}`, bindings)).rows;
      const scan = plan.Plan.Plans[0];
      expect({ type: scan['Node Type'], index: scan['Index Name'], rows: scan['Actual Rows'] }).toEqual({ type: 'Index Scan', index: 'renders_listing_order', rows: 101 });
    }
  });

  it('answers an empty project with no items and no cursor', async () => {
    const project = await createProject(server.baseUrl, user, 'Empty paged');
    const res = await page(project.id, 'limit=100');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, error: null, content: [], nextCursor: null });
  });

  it('reuses the first page for a few seconds like the whole listing; refresh=1 and deletes through the API read afresh', async () => {
    const project = await createProject(server.baseUrl, user, 'Cached first page');
    await knex('renders').insert(row('renders', project.id, 'first', '2026-01-01 00:00:00+00'));
    expect((await page(project.id, 'limit=10')).body.content).toHaveLength(1);
    const [added] = await knex('renders').insert(row('renders', project.id, 'second', '2026-01-02 00:00:00+00')).returning('id');
    expect((await page(project.id, 'limit=10')).body.content).toHaveLength(1);
    expect((await page(project.id, 'limit=10&refresh=1')).body.content.map((i) => i.data.name)).toEqual(['second', 'first']);
    await request(server.baseUrl, `/api/projects/${project.id}/content/renders/${added.id}`, { method: 'DELETE', token: user.token });
    expect((await page(project.id, 'limit=10')).body.content.map((i) => i.data.name)).toEqual(['first']);
  });

  it('refuses a limit that is not a whole number from 1 to 200 with 400', async () => {
    const project = await createProject(server.baseUrl, user, 'Bad limits');
    for (const limit of ['0', '201', '1000', '-1', '1.5', 'abc', '', '1e2', '0100']) {
      const res = await page(project.id, `limit=${encodeURIComponent(limit)}`);
      expect({ limit, status: res.status }).toEqual({ limit, status: 400 });
      expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', error: 'limit must be a whole number from 1 to 200' });
    }
    const twice = await page(project.id, 'limit=10&limit=20');
    expect(twice.status).toBe(400);
    expect(twice.body.error).toBe('limit must be a whole number from 1 to 200');
    for (const ok of ['1', '200', '050']) expect((await page(project.id, `limit=${ok}`)).status).toBe(200);
  });

  it('refuses a cursor it did not hand out with 400', async () => {
    const project = await createProject(server.baseUrl, user, 'Bad cursors');
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const bad = [
      'not a cursor',
      'abc',
      encode({ at: '2026-01-01T00:00:00.000Z', id: randomUUID() }),
      encode(['2026-01-01T00:00:00.000Z', 'not-a-uuid']),
      encode(['2026-13-01T00:00:00.000Z', randomUUID()]),
      encode(['2026-01-01', randomUUID()]),
      encode(['0000-01-01T00:00:00.000Z', randomUUID()]),
      encode(['2026-01-01T00:00:00.000Z', randomUUID(), 'extra']),
      'A'.repeat(300),
    ];
    for (const cursor of bad) {
      const res = await page(project.id, `limit=10&cursor=${encodeURIComponent(cursor)}`);
      expect({ cursor, status: res.status }).toEqual({ cursor, status: 400 });
      expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', error: 'cursor must be the nextCursor of the previous page' });
    }
    // a well-formed cursor past every item is an empty last page
    const past = await page(project.id, `cursor=${encode(['1970-01-01T00:00:00.000Z', randomUUID()])}`);
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ success: true, error: null, content: [], nextCursor: null });
  });

  it("answers another user's or a missing project exactly as the whole listing does", async () => {
    const project = await createProject(server.baseUrl, user, 'Private paged');
    await seedMixed(project.id, 20);
    const stranger = await newUser(server.baseUrl);
    const cursor = (await page(project.id, 'limit=5')).body.nextCursor;
    for (const projectId of [project.id, randomUUID(), 'not-a-uuid']) {
      const whole = await request(server.baseUrl, `/api/projects/${projectId}/content`, { token: stranger.token });
      expect(whole.status).toBeGreaterThanOrEqual(400);
      for (const query of ['limit=5', `limit=5&cursor=${cursor}`, `cursor=${cursor}`]) {
        const paged = await page(projectId, query, stranger);
        expect({ projectId, query, status: paged.status, body: paged.body }).toEqual({ projectId, query, status: whole.status, body: whole.body });
      }
    }
    const signedOut = await request(server.baseUrl, `/api/projects/${project.id}/content?limit=5`);
    expect(signedOut.status).toBe(401);
  });
});
