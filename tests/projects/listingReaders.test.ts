import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createStorage, storageConfigOf, type Storage } from '../../storage';
import { createListingReaders, ListingReaderNotReadyError, type ListingReaders } from '../../services/content/listingReaders';
import { listingBody, pageBody } from '../../services/content/library';
import type { TestUser } from '../support/accounts';
import { createProject, newUser } from './fixtures';

// Reader threads build the listing's bytes off the API's event loop: the same bytes the API thread makes, errors
// passed on, and the API thread reading for itself when no thread can.
let config: AppConfig;
let knex: Knex;
let storage: Storage;
let readers: ListingReaders;
let server: TestServer;
let user: TestUser;
let projectId: string;

const readerOptions = (overrides: { databaseUrl?: string } = {}) => ({
  threads: 2,
  databaseUrl: overrides.databaseUrl ?? config.databaseUrl,
  storage: storageConfigOf(config),
  poolMax: 2,
  logger,
});

/** The bytes with each link's expiry and signature blanked (two signers agree on them only within one expiry step). */
const unsigned = (body: Buffer) => body.toString('utf8').replace(/expires=\d+&sig=[A-Za-z0-9_-]+/g, 'expires=E&sig=S');

beforeAll(async () => {
  config = loadConfig();
  knex = testKnex();
  storage = createStorage(config);
  readers = createListingReaders(readerOptions());
  await readers.ready();
  server = await serve(createApp({ config, knex, logger, listingReaders: readers }));
  user = await newUser(server.baseUrl);
  projectId = (await createProject(server.baseUrl, user, 'Readers')).id;
  const row = (table: string, bucket: string, i: number) => {
    const path = `${user.id}/${table}-${i}-${randomUUID()}.png`;
    return {
      project_id: projectId,
      workspace_id: user.id,
      file_url: `/api/files/${bucket}/${path}`,
      file_name: `${table} ${i} "é" \u2028`,
      storage_bucket: bucket,
      storage_path: path,
      created_at: knex.raw(`timestamptz '2026-02-01 00:00:00+00' + interval '${i * 1000003} microseconds'`),
    };
  };
  await knex('renders').insert(Array.from({ length: 12 }, (_, i) => ({ ...row('renders', 'renders', i), thumbnail_path: `thumbs/${user.id}/r${i}.webp`, width: 1920, height: 1080, aspect_ratio: '16:9' })));
  await knex('images').insert(Array.from({ length: 9 }, (_, i) => ({ ...row('images', 'images', i), aspect_ratio: '1:1' })));
  await knex('clips').insert(Array.from({ length: 7 }, (_, i) => ({ ...row('clips', 'clips', i), custom_name: i % 2 ? ` clip ${i} ` : null, analysis_data: { aspectRatio: '9:16' } })));
});

afterAll(async () => {
  await server.close();
  await readers.close();
  await closeTestKnex();
});

describe('content listing reader threads', () => {
  it('answer the bytes the API thread makes: the whole listing, the first page and a later one', async () => {
    const listing = await readers.listing(projectId);
    expect(unsigned(listing)).toBe(unsigned(await listingBody(knex, storage, projectId)));
    expect((JSON.parse(listing.toString('utf8')) as { content: unknown[] }).content).toHaveLength(28);
    const first = await readers.page(projectId, 10, null);
    expect(unsigned(first)).toBe(unsigned(await pageBody(knex, storage, projectId, 10, null)));
    const { content, nextCursor } = JSON.parse(first.toString('utf8')) as { content: Array<{ data: { id: string; created_at: string } }>; nextCursor: string };
    const last = content[content.length - 1].data;
    const after = { at: last.created_at, id: last.id };
    expect(unsigned(await readers.page(projectId, 10, after))).toBe(unsigned(await pageBody(knex, storage, projectId, 10, after)));
    expect(nextCursor).toEqual(expect.any(String));
    // a thread's links are this process's links: the API thread's signer accepts them
    const item = (JSON.parse(listing.toString('utf8')) as { content: Array<{ signed_url: string }> }).content[0];
    expect(storage.urls.downloadLink(item.signed_url, 'x.png')).not.toBeNull();
  });

  it('serve the app: listings and pages over HTTP, fresh reads included, with both threads running', async () => {
    const before = readers.stats();
    const reads = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        request<{ success: boolean; content: unknown[] }>(server.baseUrl, `/api/projects/${projectId}/content?refresh=1${i % 2 ? '&limit=5' : ''}`, { token: user.token }),
      ),
    );
    for (const [i, res] of reads.entries()) {
      expect(res.status).toBe(200);
      expect(res.body.content).toHaveLength(i % 2 ? 5 : 28);
    }
    // the six fresh reads were the threads' (not the API thread's)
    expect(readers.stats()).toEqual({ threads: 2, answered: before.answered + 6, failed: before.failed });
  });

  it('fail a read they cannot make, which the API thread then makes itself (its answer, errors included, as before)', async () => {
    // no server there at all: the thread's connections need not wait for one that is starting (db/reconnect.ts)
    const broken = createListingReaders({ ...readerOptions({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none' }), threads: 1, reconnectWaitMs: 0 });
    await broken.ready();
    const app = await serve(createApp({ config, knex, logger, listingReaders: broken }));
    try {
      await expect(broken.listing(projectId)).rejects.toThrow('The database is not reachable right now');
      expect(broken.stats()).toEqual({ threads: 1, answered: 0, failed: 1 });
      for (const query of ['?refresh=1', '?refresh=1&limit=4']) {
        const res = await request<{ content: unknown[] }>(app.baseUrl, `/api/projects/${projectId}/content${query}`, { token: user.token });
        expect(res.status).toBe(200);
        expect(res.body.content).toHaveLength(query.includes('limit') ? 4 : 28);
      }
      // both went to the thread first, failed there, and were answered by the API thread
      expect(broken.stats()).toEqual({ threads: 1, answered: 0, failed: 3 });
    } finally {
      await app.close();
      await broken.close();
    }
  });

  it('leave the reads to the API thread while no thread is ready yet, and send none to a thread still starting', async () => {
    const starting = createListingReaders({ ...readerOptions(), threads: 1 });
    const app = await serve(createApp({ config, knex, logger, listingReaders: starting }));
    try {
      // asked before the thread's ready message can have arrived (the same turn of the event loop as its start)
      await expect(starting.listing(projectId)).rejects.toBeInstanceOf(ListingReaderNotReadyError);
      await expect(starting.page(projectId, 5, null)).rejects.toBeInstanceOf(ListingReaderNotReadyError);
      expect(starting.stats()).toEqual({ threads: 1, answered: 0, failed: 0 });
      // once ready, the thread answers
      await starting.ready();
      const res = await request<{ content: unknown[] }>(app.baseUrl, `/api/projects/${projectId}/content?refresh=1`, { token: user.token });
      expect(res.status).toBe(200);
      expect(res.body.content).toHaveLength(28);
      expect(starting.stats()).toEqual({ threads: 1, answered: 1, failed: 0 });
    } finally {
      await app.close();
      await starting.close();
    }
  });

  it('leave the reads to the API thread once none is running', async () => {
    const gone = createListingReaders({ ...readerOptions(), threads: 1 });
    await gone.close();
    expect(gone.stats().threads).toBe(0);
    await expect(gone.listing(projectId)).rejects.toThrow(/reader thread gone/);
    const app = await serve(createApp({ config, knex, logger, listingReaders: gone }));
    try {
      const res = await request<{ content: unknown[] }>(app.baseUrl, `/api/projects/${projectId}/content?refresh=1`, { token: user.token });
      expect(res.status).toBe(200);
      expect(res.body.content).toHaveLength(28);
    } finally {
      await app.close();
    }
  });
});
