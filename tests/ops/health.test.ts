import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { closeTestKnex, testKnex } from '../support/db';
import { closedPort, request, serve, type TestServer } from '../support/http';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3ObjectStorage } from '../../storage';
import { runStorage } from '../support/objectStorage';

let storageDir: string;
let config: AppConfig;
let healthy: TestServer;
let broken: TestServer;
let brokenDb: Knex;

beforeAll(async () => {
  storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-health-'));
  config = { ...loadConfig(), storageDir };
  healthy = await serve(createApp({ config, knex: testKnex(), logger }));
  brokenDb = knexFactory({ client: 'pg', connection: 'postgres://nobody:secret@127.0.0.1:1/none', acquireConnectionTimeout: 1000, pool: { min: 0, max: 1 }, log: { warn() {}, error() {}, debug() {}, deprecate() {} } });
  // a storage root under a regular file cannot be created; the namespace does not exist on the run's Temporal server
  const notADir = path.join(storageDir, 'plain-file');
  fs.writeFileSync(notADir, 'x');
  // with object storage: an endpoint nothing listens on
  const brokenStorage = config.storageBackend === 's3' ? { s3: { ...config.s3, endpoint: `http://127.0.0.1:${await closedPort()}` } } : {};
  broken = await serve(createApp({ config: { ...config, ...brokenStorage, storageDir: path.join(notADir, 'storage'), temporalNamespace: 'no-such-namespace' }, knex: brokenDb, logger }));
});

afterAll(async () => {
  await healthy.close();
  await broken.close();
  await brokenDb.destroy();
  await closeTemporalClient();
  await closeTestKnex();
  fs.rmSync(storageDir, { recursive: true, force: true });
});

describe('GET /health/live', () => {
  it('answers 200 without a session, even when every dependency is down', async () => {
    for (const server of [healthy, broken]) {
      const res = await request(server.baseUrl, '/health/live');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'live' });
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const head = await fetch(`${broken.baseUrl}/health/live`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });
});

describe('GET /health/ready', () => {
  it('answers 200 when PostgreSQL answers, the Temporal namespace is reachable and storage is writable', async () => {
    const res = await request(healthy.baseUrl, '/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ready',
      failing: [],
      checks: { database: { ok: true }, temporal: { ok: true }, storage: { ok: true } },
    });
    // the probe file is removed again
    if (config.storageBackend === 'local') expect(fs.readdirSync(path.join(storageDir, '.health'))).toEqual([]);
    else {
      const objects = runStorage().objects as S3ObjectStorage;
      const listed = await objects.client.send(new ListObjectsV2Command({ Bucket: objects.bucketName('renders'), Prefix: '_health/' }));
      expect(listed.Contents ?? []).toEqual([]);
    }
  });

  it('answers 503 naming each failing part, without internal error text', async () => {
    const res = await request(broken.baseUrl, '/health/ready');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('not ready');
    expect(res.body.failing).toEqual(['database', 'temporal', 'storage']);
    expect(res.body.checks).toMatchObject({
      database: { ok: false, error: 'PostgreSQL does not answer' },
      temporal: { ok: false, error: 'Temporal namespace "no-such-namespace" is not reachable' },
      storage: { ok: false, error: 'Storage is not writable' },
    });
    expect(JSON.stringify(res.body)).not.toMatch(/secret|ENOTDIR|ECONNREFUSED|127\.0\.0\.1/);
  });

  it('answers within the check timeout when only one part fails', async () => {
    const partly = await serve(createApp({ config: { ...config, temporalNamespace: 'no-such-namespace' }, knex: testKnex(), logger }));
    try {
      // each part's check has its own timeout, so one failing part cannot hold the answer; how long the answer takes
      // on a busy machine is not what is tested
      const res = await request(partly.baseUrl, '/health/ready');
      expect(res.status).toBe(503);
      expect(res.body.failing).toEqual(['temporal']);
    } finally {
      await partly.close();
    }
  });
});

describe('GET /api/health (kept for existing callers)', () => {
  it('still answers the database-only check', async () => {
    expect(await request(healthy.baseUrl, '/api/health')).toMatchObject({ status: 200, body: { success: true, status: 'ok' } });
    expect(await request(broken.baseUrl, '/api/health')).toMatchObject({ status: 503, body: { success: false, status: 'unavailable' } });
  });
});
