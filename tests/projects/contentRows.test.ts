import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { types as pgTypes } from 'pg';
import { closeTestKnex, testKnex } from '../support/db';
import { createTestUser, type TestUser } from '../support/accounts';
import { serve, type TestServer } from '../support/http';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createStorage, type Storage } from '../../storage';
import { isoTimestampFromPg, readContentRows } from '../../services/content/contentRows';
import { CONTENT_SOURCES, contentItem, contentItemMaker, type ContentRow } from '../../services/content/contentViews';
import { createProject } from './fixtures';

const pgTimestamptz = pgTypes.getTypeParser(1184, 'text') as (text: string) => Date | number;

/** What the view made of a timestamptz before: pg's Date, then its ISO text. */
function viaDate(text: string): string {
  return (pgTimestamptz(text) as Date).toISOString();
}

describe('isoTimestampFromPg', () => {
  it('gives the ISO text of pg Date for microsecond fractions of every length, cut to the millisecond', () => {
    // every fraction of the first 3 ms and every 1-, 2- and 3-digit fraction, then a stride through the rest
    const fractions = new Set<number>();
    for (let micros = 0; micros < 3000; micros += 1) fractions.add(micros);
    for (let millis = 0; millis < 1000; millis += 1) fractions.add(millis * 1000);
    for (let micros = 3000; micros < 1_000_000; micros += 97) fractions.add(micros);
    for (const micros of fractions) {
      const fraction = String(micros).padStart(6, '0').replace(/0+$/, '');
      const text = `2026-03-04 05:06:07${fraction ? `.${fraction}` : ''}+00`;
      const got = isoTimestampFromPg(text);
      if (got !== viaDate(text)) throw new Error(`${text}: ${String(got)} !== ${viaDate(text)}`);
    }
  });

  it('leaves other zones, DateStyles, BC, long years and infinity to pg own parser', () => {
    for (const text of ['2026-03-04 05:06:07.5+05:30', '2026-03-04 10:36:07-08', '0044-03-15 12:00:00+00 BC', '12026-03-04 05:06:07+00', 'infinity', '-infinity', 'Wed Mar 04 05:06:07 2026 UTC']) {
      expect(isoTimestampFromPg(text)).toEqual(pgTimestamptz(text));
    }
    expect(isoTimestampFromPg('0999-12-31 23:59:59.9999+00')).toBe(viaDate('0999-12-31 23:59:59.9999+00'));
  });
});

describe('content rows read as arrays', () => {
  let knex: Knex;
  let server: TestServer;
  let user: TestUser;
  let storage: Storage;

  beforeAll(async () => {
    knex = testKnex();
    const config = loadConfig();
    storage = createStorage(config);
    server = await serve(createApp({ config, knex, logger }));
    user = await createTestUser(server.baseUrl);
  });

  afterAll(async () => {
    await server.close();
    await closeTestKnex();
  });

  it('make the same items, in the same key order, as the rows pg hands over as objects', async () => {
    const project = await createProject(server.baseUrl, user, 'Rows');
    const common = (table: string, bucket: string, i: number) => {
      const path = `${user.id}/${table}-${i}-${randomUUID()}.bin`;
      const ours = i % 3 !== 2;
      return {
        project_id: project.id,
        workspace_id: user.id,
        file_url: ours ? `/api/files/${bucket}/${path}` : `https://cdn.example.com/${table}-${i}.png`,
        file_name: `${table} ${i} "quoted" é`,
        storage_bucket: ours ? bucket : null,
        storage_path: ours ? path : null,
        created_at: knex.raw(`timestamptz '2026-01-01 00:00:00+00' + interval '${i * 1000003} microseconds'`),
      };
    };
    const seed = (table: string, bucket: string, extra: (i: number) => Record<string, unknown>) =>
      knex(table).insert(Array.from({ length: 6 }, (_, i) => ({ ...common(table, bucket, i), ...extra(i) })));
    await seed('renders', 'renders', (i) => ({ thumbnail_path: i % 2 ? `thumbs/${user.id}/r${i}.webp` : null, width: 1920, height: 1080, aspect_ratio: '16:9', file_size: String(2 ** 40 + i), checksum: `c-${randomUUID()}` }));
    await seed('images', 'images', (i) => ({ aspect_ratio: i % 2 ? '1:1' : ' ', upscaled: i % 2 === 0, original_prompt: i % 2 ? 'a\nb' : null }));
    await seed('clips', 'clips', (i) => ({
      thumbnail_path: i % 2 ? `thumbs/${user.id}/c${i}.jpg` : null,
      thumbnail_url: i % 4 === 0 ? `/api/files/clips/${user.id}/t${i}.jpg` : i % 4 === 2 ? 'https://ext.example.com/t.jpg' : null,
      custom_name: i % 3 === 0 ? `  custom ${i}  ` : i % 3 === 1 ? '   ' : null,
      duration: '5.50',
      analysis_data: i % 2 ? { aspectRatio: '9:16', nested: [1, { b: 2, a: 1 }] } : { aspect_ratio: '1:1' },
    }));
    await seed('compiled_videos', 'videos', (i) => ({ clip_ids: [randomUUID()], duration: '12.345', editing_data: { status: 'approved', aspectRatio: i % 2 ? '4:5' : undefined } }));
    await seed('generated_content', 'images', (i) => ({ content_type: ['image', 'render', 'video', 'clip'][i % 4], generation_data: i % 2 ? { aspectRatio: '3:2' } : {} }));

    for (const source of CONTENT_SOURCES) {
      const query = () => knex(source).where({ project_id: project.id }).orderBy('created_at', 'desc');
      const asObjects = (await query()) as ContentRow[];
      const asArrays = await readContentRows(knex, query());
      expect(asArrays.rows).toHaveLength(6);
      const items = asArrays.rows.map(contentItemMaker(storage, source, asArrays));
      // byte for byte: the same keys in the same order, the same values
      expect(JSON.stringify(items)).toBe(JSON.stringify(asObjects.map((row) => contentItem(storage, source, row))));
    }
  });
});
