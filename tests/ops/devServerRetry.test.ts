/**
 * startTemporalDevServer starts the dev server again when it exits by itself while starting (a CI run once saw
 * start-dev end early with status 2), gives up with the start-up error after `attempts` tries, and does not start
 * again after the caller stopped it (a Ctrl-C during start-up). The CLI is wrapped by a script that fails the first
 * `server start-dev` calls and passes everything else (the readiness probes included) to the real one.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services.js') as {
  freePort: () => Promise<number>;
  portOpen: (port: number) => Promise<boolean>;
  startTemporalDevServer: (options: { cli: string; port: number; attempts?: number; onSpawn?: (stop: () => Promise<void>) => void }) => Promise<{
    address: string;
    stop: () => Promise<void>;
  }>;
};

let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dev-server-retry-'));
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A stand-in for the CLI whose first `failures` start-dev calls exit with status 2 (a Go panic's); each start-dev call is counted. */
async function flakyCli(name: string, failures: number): Promise<{ cli: string; starts: () => Promise<number> }> {
  const real = process.env.TEMPORAL_CLI_PATH;
  if (!real) throw new Error('TEMPORAL_CLI_PATH is not set: globalSetup installs the Temporal CLI');
  const counter = path.join(dir, `${name}.starts`);
  const cli = path.join(dir, `${name}.sh`);
  await fs.writeFile(
    cli,
    [
      '#!/bin/sh',
      'if [ "$1" = server ]; then',
      `  echo start >> '${counter}'`,
      `  if [ "$(wc -l < '${counter}')" -le ${failures} ]; then exit 2; fi`,
      'fi',
      `exec '${real}' "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const starts = async () => (await fs.readFile(counter, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  return { cli, starts };
}

describe('startTemporalDevServer when the server exits while starting', () => {
  it('starts it again and answers once one start comes up', async () => {
    const { cli, starts } = await flakyCli('twice', 2);
    const stops: Array<() => Promise<void>> = [];
    const server = await services.startTemporalDevServer({ cli, port: await services.freePort(), onSpawn: (stop) => stops.push(stop) });
    try {
      expect(await starts()).toBe(3);
      // every attempt was handed to the caller, so a Ctrl-C during start-up can stop whichever is running
      expect(stops).toHaveLength(3);
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('gives up after the attempts with the start-up error', async () => {
    const { cli, starts } = await flakyCli('always', 99);
    const port = await services.freePort();
    await expect(services.startTemporalDevServer({ cli, port, attempts: 2 })).rejects.toThrow(`The Temporal dev server exited (2) while starting. Fix: free port ${port}`);
    expect(await starts()).toBe(2);
  }, 60_000);

  it('does not start it again after the caller stopped it while it was starting', async () => {
    const { cli, starts } = await flakyCli('stopped', 0);
    // as npm start does on a Ctrl-C: stop the attempt it was handed, long before the server can answer
    const started = services.startTemporalDevServer({ cli, port: await services.freePort(), onSpawn: (stop) => void setTimeout(() => void stop(), 50) });
    await expect(started).rejects.toThrow('The Temporal dev server was stopped while starting.');
    expect(await starts()).toBe(1);
  }, 60_000);

  it('does not hand back a server that came up after the caller stopped it', async () => {
    // the real CLI acts on a SIGTERM received during start-up only once its server is up, which may be before or
    // after the readiness probe sees it (a machine's speed decides). This stand-in makes the late case certain:
    // on SIGTERM it waits until the server answers, then stops it.
    const real = process.env.TEMPORAL_CLI_PATH as string;
    const cli = path.join(dir, 'late-stop.sh');
    const port = await services.freePort();
    const pidFile = path.join(dir, 'late-stop.pid');
    const ready = `'${real}' operator namespace describe --namespace default --address 127.0.0.1:${port} >/dev/null 2>&1`;
    await fs.writeFile(
      cli,
      [
        '#!/bin/sh',
        `if [ "$1" != server ]; then exec '${real}' "$@"; fi`,
        `'${real}' "$@" &`,
        'pid=$!',
        `echo $pid > '${pidFile}'`,
        `trap 'until ${ready}; do sleep 0.1; done; kill $pid; wait $pid; exit 143' TERM`,
        'wait $pid',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const started = services.startTemporalDevServer({ cli, port, onSpawn: (stop) => void setTimeout(() => void stop(), 50) });
    try {
      await expect(started).rejects.toThrow('The Temporal dev server was stopped while starting.');
      // nothing is left listening once the rejection is seen
      expect(await services.portOpen(port)).toBe(false);
    } finally {
      // should the stand-in itself be killed hard, its server is not left behind
      const pid = Number(await fs.readFile(pidFile, 'utf8').catch(() => '0'));
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone, as it should be
        }
      }
    }
  }, 60_000);
});
