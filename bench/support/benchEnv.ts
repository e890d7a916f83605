/**
 * What a benchmark needs around it: a migrated database (DATABASE_URL, else an embedded PostgreSQL in
 * .data/bench-postgres) and the API in its own process (support/appServer.ts), so load generator and server
 * do not share an event loop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

interface EmbeddedPostgres {
  url: string;
  ensureDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}
interface ServicesModule {
  freePort(): Promise<number>;
  startEmbeddedPostgres(opts: { dataDir: string; port: number }): Promise<EmbeddedPostgres>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as ServicesModule;

export async function benchDatabase(): Promise<{ url: string; stop: (() => Promise<void>) | null }> {
  let db: { url: string; stop: (() => Promise<void>) | null };
  if (process.env.DATABASE_URL) db = { url: process.env.DATABASE_URL, stop: null };
  else {
    const pg = await services.startEmbeddedPostgres({ dataDir: path.join(ROOT, '.data', 'bench-postgres'), port: await services.freePort() });
    await pg.ensureDatabase('render_studio_bench');
    db = { url: `${pg.url}/render_studio_bench`, stop: pg.stop };
  }
  const r = spawnSync(TSX, ['db/migrate.ts', 'latest'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url }, stdio: 'inherit' });
  if (r.status !== 0) {
    if (db.stop) await db.stop();
    throw new Error('migrations failed');
  }
  return db;
}

export interface BenchApi {
  baseUrl: string;
  child: ChildProcess;
  stop: () => Promise<void>;
}

export async function startBenchApi(databaseUrl: string, env: Record<string, string> = {}): Promise<BenchApi> {
  const child = spawn(TSX, [path.join(__dirname, 'appServer.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('API did not start within 60 s')), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`API exited with ${code} before listening`));
    });
  });
  const stop = (): Promise<void> => {
    if (child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  };
  return { baseUrl: `http://127.0.0.1:${port}`, child, stop };
}
