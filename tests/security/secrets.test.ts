/**
 * Issue 15 item 1: no secret has a usable built-in value. The configuration refuses a missing or short
 * SIGNING_SECRET with one message naming it; the entry points print that message alone and exit 1; `npm start`
 * generates the secret once into DATA_DIR/secrets.json (0600) and reuses it; a link signed with the value that used
 * to be built in is refused.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../api/app';
import { ConfigError, MIN_SECRET_LENGTH, loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { UrlSigner, createStorage } from '../../storage';
import { closeTestKnex, testKnex } from '../support/db';
import { serve, type TestServer } from '../support/http';

// plain CommonJS shared with npm start
// eslint-disable-next-line @typescript-eslint/no-require-imports
const secrets = require('../../scripts/lib/secrets') as {
  MIN_SECRET_LENGTH: number;
  ensureLocalSecrets(dataDir: string, env: NodeJS.ProcessEnv): { values: Record<string, string>; file: string; generated: string[] };
};

const ROOT = path.resolve(__dirname, '..', '..');
/** The value config/env.ts fell back to before this change. */
const FORMER_BUILT_IN = 'dev-only-signing-secret-change-me';
const GOOD = 'a'.repeat(64);

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('SIGNING_SECRET in the configuration', () => {
  it('is refused when missing, naming the variable and how to make one', () => {
    for (const env of [{}, { SIGNING_SECRET: '' }, { NODE_ENV: 'production' }, { PUBLIC_URL: 'https://studio.example.com' }]) {
      const err = configError(env);
      expect(err.message).toMatch(/^SIGNING_SECRET is not set\./);
      expect(err.message).toContain('npm start');
      expect(err.message).toContain('openssl rand -hex 32');
    }
  });

  it(`is refused when shorter than ${MIN_SECRET_LENGTH} characters`, () => {
    for (const value of ['x', 'b'.repeat(MIN_SECRET_LENGTH - 1)]) {
      const err = configError({ SIGNING_SECRET: value });
      expect(err.message).toContain(`SIGNING_SECRET is too short (${value.length} characters; at least ${MIN_SECRET_LENGTH} needed)`);
      expect(err.message).toContain('openssl rand -hex 32');
    }
  });

  it('is refused when it is the value once built in (33 characters, public in the history)', () => {
    expect(FORMER_BUILT_IN.length).toBeGreaterThanOrEqual(MIN_SECRET_LENGTH);
    expect(configError({ SIGNING_SECRET: FORMER_BUILT_IN }).message).toMatch(/^SIGNING_SECRET is the value this project once had built in/);
    expect(configError({ SIGNING_SECRET: FORMER_BUILT_IN, NODE_ENV: 'production' }).message).toMatch(/^SIGNING_SECRET is the value/);
  });

  it('is taken as given when long enough; jest runs with a random one of its own', () => {
    expect(loadConfig({ SIGNING_SECRET: GOOD }).signingSecret).toBe(GOOD);
    expect(loadConfig({ SIGNING_SECRET: 'c'.repeat(MIN_SECRET_LENGTH) }).signingSecret).toHaveLength(MIN_SECRET_LENGTH);
    const perRun = loadConfig().signingSecret;
    expect(perRun).toMatch(/^[0-9a-f]{64}$/);
    expect(perRun).not.toBe(FORMER_BUILT_IN);
  });

  it('METRICS_TOKEN may be unset (loopback only) but, when set, is held to the same length', () => {
    expect(loadConfig({ SIGNING_SECRET: GOOD }).metricsToken).toBe('');
    expect(loadConfig({ SIGNING_SECRET: GOOD, METRICS_TOKEN: GOOD }).metricsToken).toBe(GOOD);
    const err = configError({ SIGNING_SECRET: GOOD, METRICS_TOKEN: 'prometheus' });
    expect(err.message).toMatch(/^METRICS_TOKEN is too short \(10 characters; at least 32 needed\).*openssl rand -hex 32/);
    expect(err.message).not.toContain('npm start'); // npm start generates only SIGNING_SECRET
  });

  it('is not needed by the logger or the migrations, which read their own settings only', () => {
    const source = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
    expect(source('config/logger.ts')).not.toContain('loadConfig');
    expect(source('db/migrate.ts')).not.toContain('loadConfig');
    // no fallback is left in the configuration: the only mention of the former value is the refusal list
    expect(source('config/env.ts')).not.toMatch(/SIGNING_SECRET \?\?|SIGNING_SECRET \|\|/);
  });
});

describe('entry points without SIGNING_SECRET', () => {
  function run(entry: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', PORT: '0' };
    delete env.SIGNING_SECRET;
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.once('error', reject);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr, stdout });
      });
    });
  }

  it.each(['api/server.ts', 'workers/main.ts', 'bench/support/appServer.ts'])('%s stops at once with one line naming it, no stack trace', async (entry) => {
    const { code, stderr, stdout } = await run(entry);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Configuration error: SIGNING_SECRET is not set\. .*openssl rand -hex 32/)]);
    expect(`${stdout}${stderr}`).not.toMatch(/^\s+at /m);
    expect(stdout).not.toContain('listening');
  }, 120_000);
});

describe('npm start: secrets generated into the data folder', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-secrets-'));
  });
  afterEach(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes a random SIGNING_SECRET once, mode 0600, and reuses it on every later start', () => {
    const first = secrets.ensureLocalSecrets(dataDir, {});
    expect(first.generated).toEqual(['SIGNING_SECRET']);
    expect(first.file).toBe(path.join(dataDir, 'secrets.json'));
    expect(first.values.SIGNING_SECRET).toMatch(/^[0-9a-f]{64}$/); // 32 random bytes
    expect(fs.statSync(first.file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(first.file, 'utf8'))).toEqual({ SIGNING_SECRET: first.values.SIGNING_SECRET });
    const written = fs.statSync(first.file).mtimeMs;

    const again = secrets.ensureLocalSecrets(dataDir, {});
    expect(again.generated).toEqual([]);
    expect(again.values).toEqual(first.values);
    expect(fs.statSync(first.file).mtimeMs).toBe(written);
    // what the API is started with passes the configuration's check
    expect(loadConfig({ ...again.values }).signingSecret).toBe(first.values.SIGNING_SECRET);

    // another data folder: another secret
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-secrets-'));
    try {
      expect(secrets.ensureLocalSecrets(other, {}).values.SIGNING_SECRET).not.toBe(first.values.SIGNING_SECRET);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('closes a secrets file others can read', () => {
    const { file } = secrets.ensureLocalSecrets(dataDir, {});
    fs.chmodSync(file, 0o644);
    secrets.ensureLocalSecrets(dataDir, {});
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('leaves a SIGNING_SECRET set in the environment alone and writes nothing', () => {
    const result = secrets.ensureLocalSecrets(dataDir, { SIGNING_SECRET: GOOD });
    expect(result).toMatchObject({ values: {}, generated: [] });
    expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).toBe(false);
  });

  it('refuses a short or once built-in SIGNING_SECRET from the environment, naming it', () => {
    expect(() => secrets.ensureLocalSecrets(dataDir, { SIGNING_SECRET: FORMER_BUILT_IN })).toThrow(/^SIGNING_SECRET is the value this project once had built in/);
    expect(() => secrets.ensureLocalSecrets(dataDir, { SIGNING_SECRET: 'short' })).toThrow('SIGNING_SECRET is too short (5 characters; at least 32 needed)');
  });

  it('generates nothing for a start that is not local (NODE_ENV=production, a PUBLIC_URL elsewhere): the message names the variable', () => {
    for (const env of [{ NODE_ENV: 'production' }, { PUBLIC_URL: 'https://studio.example.com' }, { PUBLIC_URL: 'http://10.0.0.5:3000' }]) {
      expect(() => secrets.ensureLocalSecrets(dataDir, env)).toThrow(/^SIGNING_SECRET is not set, and npm start generates secrets only for a local start .*openssl rand -hex 32/);
    }
    expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).toBe(false);
    for (const url of ['http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:3000']) {
      expect(secrets.ensureLocalSecrets(dataDir, { PUBLIC_URL: url }).values.SIGNING_SECRET).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});

describe('file links signed with the former built-in value', () => {
  let server: TestServer;
  const stored = { bucket: 'renders' as const, path: `secrets-test-${process.pid}/render.png` };

  beforeAll(async () => {
    const config = loadConfig();
    await createStorage(config).objects.put(stored.bucket, stored.path, Buffer.from('not really a png'));
    server = await serve(createApp({ config, knex: testKnex(), logger }));
  });
  afterAll(async () => {
    await server?.close();
    // the pool's idle connections would keep the jest worker alive after the run
    await closeTestKnex();
  });

  it('are refused with 403 even with an expiry in 2100, while the app\'s own links open', async () => {
    const forger = new UrlSigner({ secret: FORMER_BUILT_IN, ttlSeconds: 60, expiryStepSeconds: 1, now: () => Date.UTC(2100, 0, 1) });
    const forged = forger.sign(stored.bucket, stored.path);
    expect(Number(new URL(forged, server.baseUrl).searchParams.get('expires'))).toBeGreaterThanOrEqual(Date.UTC(2100, 0, 1) / 1000);
    const refused = await fetch(`${server.baseUrl}${forged}`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'LINK_INVALID' });

    const own = createStorage(loadConfig()).urls.sign(stored.bucket, stored.path);
    // the API's /api/files link on disk, a presigned object storage link on S3
    const served = await fetch(new URL(own, server.baseUrl));
    expect(served.status).toBe(200);
    expect(await served.text()).toBe('not really a png');
  });
});
