/**
 * The account data tests run the real thing: the API on a port, the export and deletion workflows (and the clip
 * workflow a deletion cancels) on the run's Temporal dev server with a worker on a queue of the test's own,
 * PostgreSQL and local storage.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import yauzl from 'yauzl';
import { createApp } from '../../../api/app';
import { logger } from '../../../config/logger';
import { createStorage, type Bucket, type Storage } from '../../../storage';
import { allStoredPaths } from '../../support/objectStorage';
import { clipTestConfig } from '../../clips/fixtures';
import { testKnex } from '../../support/db';
import { request, serve, type TestServer } from '../../support/http';
import { uniqueTaskQueue } from '../../support/temporal';
import type { AppConfig } from '../../../config/env';
import type { TestUser } from '../../support/accounts';
import type { DataExportView } from '../../../domain/accountData';

export interface AccountDataApp {
  server: TestServer;
  baseUrl: string;
  config: AppConfig;
  storage: Storage;
  taskQueue: string;
  close: () => Promise<void>;
}

/** One queue for everything the app starts (exports, deletions, clips, their media work and approvals). */
export async function startAccountDataApp(taskQueue = uniqueTaskQueue('account-data')): Promise<AccountDataApp> {
  const config = clipTestConfig();
  const queues = { generation: taskQueue, media: taskQueue, approvals: taskQueue, accountData: taskQueue, onboarding: taskQueue };
  const server = await serve(createApp({ config, knex: testKnex(), logger, taskQueues: queues }));
  return { server, baseUrl: server.baseUrl, config, storage: createStorage(config), taskQueue, close: () => server.close() };
}

/** A file as the test compares it: its name in the zip (files/<bucket>/<path>) and its sha256. */
export interface FileDigest {
  name: string;
  sha256: string;
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  const handle = await fs.open(file, 'r');
  try {
    for await (const chunk of handle.createReadStream()) hash.update(chunk as Buffer);
  } finally {
    await handle.close().catch(() => undefined);
  }
  return hash.digest('hex');
}

/** Every file under <bucket>/<prefix> in the run's storage (disk or object storage), named as the export names it. */
export async function storedFilesUnder(storage: Storage, bucket: Bucket, prefix: string): Promise<FileDigest[]> {
  const out: FileDigest[] = [];
  for (const object of await storage.objects.list(bucket, prefix)) {
    const hash = createHash('sha256');
    for await (const chunk of await storage.objects.read(bucket, object.path)) hash.update(chunk as Buffer);
    out.push({ name: `files/${bucket}/${object.path}`, sha256: hash.digest('hex') });
  }
  return out;
}

/** Every stored path (`<bucket>/<path>`) that contains `needle`: what a deletion must leave none of. */
export async function storagePathsContaining(needle: string): Promise<string[]> {
  return (await allStoredPaths()).filter((p) => p.includes(needle));
}

export interface ZipEntry {
  name: string;
  data: Buffer;
}

/** Reads every entry of a zip (yauzl, the reader the export is checked with). */
export function readZip(file: string): Promise<ZipEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const entries: ZipEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (streamErr, stream) => {
          if (streamErr || !stream) return reject(streamErr ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({ name: entry.fileName, data: Buffer.concat(chunks) });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export async function latestExport(baseUrl: string, user: Pick<TestUser, 'token'>): Promise<DataExportView | null> {
  const res = await request<{ success: boolean; export: DataExportView | null }>(baseUrl, '/api/account/exports', { token: user.token });
  if (res.status !== 200) throw new Error(`GET /api/account/exports answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.export;
}

/** Polls the status call until the export is no longer running; every answer is kept. */
export async function waitForExport(baseUrl: string, user: Pick<TestUser, 'token'>, timeoutMs = 60_000): Promise<{ view: DataExportView; seen: DataExportView[] }> {
  const deadline = Date.now() + timeoutMs;
  const seen: DataExportView[] = [];
  for (;;) {
    const view = await latestExport(baseUrl, user);
    if (!view) throw new Error('no export');
    seen.push(view);
    if (view.status !== 'pending' && view.status !== 'processing') return { view, seen };
    if (Date.now() > deadline) throw new Error(`export still ${view.status} (${view.progress}%) after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** Every row of every table in which some uuid, text or jsonb column mentions one of `needles` (ids, e-mail). */
export async function rowsMentioning(knex: Knex, needles: string[]): Promise<Array<{ table: string; column: string; count: number }>> {
  const columns = (await knex('information_schema.columns')
    .where({ table_schema: 'public' })
    .whereIn('data_type', ['uuid', 'text', 'character varying', 'jsonb', 'USER-DEFINED', 'ARRAY'])
    .whereNotIn('table_name', ['knex_migrations', 'knex_migrations_lock'])
    .select('table_name', 'column_name')) as Array<{ table_name: string; column_name: string }>;
  const hits: Array<{ table: string; column: string; count: number }> = [];
  for (const { table_name: table, column_name: column } of columns) {
    for (const needle of needles) {
      const [{ count }] = await knex(table).whereRaw('??::text ilike ?', [column, `%${needle}%`]).count<{ count: string }[]>({ count: '*' });
      if (Number(count) > 0) hits.push({ table, column, count: Number(count) });
    }
  }
  return hits;
}
