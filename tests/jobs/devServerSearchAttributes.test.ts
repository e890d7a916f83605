/**
 * `npm start`'s Temporal dev server keeps its runs in a file: a database made before the search attributes existed
 * gets them on the next start (start-dev's --search-attribute flags only apply to a new database).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { RS_SEARCH_ATTRIBUTES } from '../../domain/searchAttributes';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services.js') as {
  freePort: () => Promise<number>;
  waitFor: (check: () => Promise<boolean>, what: string, timeoutMs?: number) => Promise<void>;
  portOpen: (port: number) => Promise<boolean>;
  startTemporalDevServer: (options: { cli: string; port: number; uiPort?: number; dbFile?: string }) => Promise<{ address: string; stop: () => Promise<void> }>;
};

async function customAttributes(address: string): Promise<Record<string, unknown>> {
  const connection = await Connection.connect({ address });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    return customAttributes ?? {};
  } finally {
    await connection.close();
  }
}

describe('startTemporalDevServer with a database from an earlier run', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dev-server-sa-'));
  });

  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('registers RsUserId, RsProjectId, RsJobKind and RsItemId on it, and a second start changes nothing', async () => {
    const cli = process.env.TEMPORAL_CLI_PATH;
    if (!cli) throw new Error('TEMPORAL_CLI_PATH is not set: globalSetup installs the Temporal CLI');
    const dbFile = path.join(dir, 'temporal.db');

    // an old database: made by a plain start-dev, without the attributes
    const port = await services.freePort();
    const old = spawn(cli, ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless', '--db-filename', dbFile, '--log-level', 'error'], { stdio: 'ignore' });
    try {
      await services.waitFor(() => services.portOpen(port), 'old dev server', 60_000);
      await services.waitFor(async () => (await customAttributes(`127.0.0.1:${port}`).catch(() => null)) !== null, 'old dev server namespace', 60_000);
      expect(Object.keys(await customAttributes(`127.0.0.1:${port}`))).toEqual([]);
    } finally {
      const exited = new Promise((resolve) => old.once('exit', resolve));
      old.kill('SIGTERM');
      await exited;
    }

    for (let start = 0; start < 2; start += 1) {
      const server = await services.startTemporalDevServer({ cli, port: await services.freePort(), dbFile });
      try {
        const names = Object.keys(await customAttributes(server.address)).sort();
        expect(names).toEqual(RS_SEARCH_ATTRIBUTES.map((key) => key.name).sort());
      } finally {
        await server.stop();
      }
    }
  });
});
