/**
 * Real services for the whole jest run: PostgreSQL (DATABASE_URL's server, or the embedded one) with a
 * throw-away database migrated to latest, a Temporal dev server in memory, and the workflow bundle built once.
 * Everything reaches the test files through process.env, which jest's workers inherit.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CHROMIUM_ARGS } from '../support/chromiumArgs';

// plain JS modules shared with npm start
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const testLogs = require('./testLogs');

const ROOT = path.resolve(__dirname, '..', '..');

export interface TestServices {
  stopTemporal: () => Promise<void>;
  stopPostgres: (() => Promise<void>) | null;
  /** The SeaweedFS S3 server of a `--storage=s3` run (STORAGE_BACKEND=s3), with its data folder. */
  stopS3: (() => Promise<void>) | null;
  s3Dir: string | null;
  postgresDir: string | null;
  adminUrl: string;
  database: string;
  /** The migrated copy scratch databases are created from (tests/support/scratchDatabase.ts), dropped at the end. */
  templateDatabase: string;
  /** The run's one Chromium (a playwright browser server), shared by the browser test files over its WebSocket. */
  stopChromium: (() => Promise<void>) | null;
}

/** The run's own PostgreSQL cluster is thrown away at its end: no setting here trades anything the tests check. */
const TEST_CLUSTER_SETTINGS = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** `create database to template from`, again while something (autovacuum) is still connected to `from`. */
async function copyDatabase(adminUrl: string, from: string, to: string): Promise<void> {
  const { Client } = await import('pg');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await admin.query(`create database "${to}" template "${from}"`);
        return;
      } catch (err) {
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await admin.end();
  }
}

/**
 * Starts Chromium as a playwright browser server and puts its address in CHROMIUM_WS_ENDPOINT
 * (tests/support/browser.ts connects to it). Without Chromium on this machine, nothing: browser tests then say so.
 */
async function startSharedChromium(): Promise<(() => Promise<void>) | null> {
  if (process.env.CHROMIUM_WS_ENDPOINT) return null;
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) return null;
  const { chromium } = await import('playwright-core');
  const server = await chromium.launchServer({
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  process.env.CHROMIUM_WS_ENDPOINT = server.wsEndpoint();
  return () => server.close();
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const runDir = path.join(ROOT, '.data', 'test');
  fs.mkdirSync(runDir, { recursive: true });
  // the Temporal SDK's and webpack's lines of each test file (tests/setup/temporalWorker.ts), one folder per run
  testLogs.pruneOldRuns();
  const logDir = path.join(testLogs.LOGS_ROOT, `run-${process.pid}`);
  process.env.TEST_LOG_DIR = logDir;

  let adminUrl = process.env.DATABASE_URL;
  let stopPostgres: (() => Promise<void>) | null = null;
  let postgresDir: string | null = null;
  if (!adminUrl) {
    // a cluster of its own per run (initdb takes about a second), so parallel runs never share a data folder
    const dataDir = path.join(runDir, `postgres-${process.pid}`);
    // thrown away at the end of the run, so nothing in it needs to survive a crash: a commit does not wait for the
    // disk (an fsync per commit cost about 2 ms, and the suite commits on every insert of its set-ups)
    const pg = await services.startEmbeddedPostgres({ dataDir, port: await services.freePort(), settings: TEST_CLUSTER_SETTINGS });
    // as root in a checkout the postgres user cannot enter (mode 700), the cluster lives elsewhere: pg.dataDir says where
    postgresDir = pg.dataDir;
    adminUrl = withDatabase(pg.url, 'postgres');
    stopPostgres = pg.stop;
  }
  const database = `rs_test_${Date.now()}_${process.pid}`;
  const { Client } = await import('pg');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${database}"`);
  // on a server of the developer's own (DATABASE_URL): the same for this run's databases only
  await admin.query(`alter database "${database}" set synchronous_commit = off`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, database);
  execFileSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['db/migrate.ts', 'latest'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: 'pipe',
  });
  // a migrated template: a test file that needs a database of its own (an exact "nothing changed" check) copies it
  // (`create database ... template`, a file copy) instead of running every migration again
  const templateDatabase = `${database}_template`;
  await copyDatabase(adminUrl, database, templateDatabase);

  // one Chromium for the whole run: a browser test file connects to it and works in browser contexts of its own
  // (isolated like separate browsers: cookies, storage, pages), instead of launching and closing Chromium itself
  const stopChromium = await startSharedChromium();

  const temporal = await services.startTemporalDevServer({
    cli: tools.ensureTemporalCli(),
    port: await services.freePort(),
    logFile: path.join(runDir, 'temporal.log'),
  });

  // `npm test -- --storage=s3`: every test's storage is a real S3-compatible server, buckets of this run's own
  let stopS3: (() => Promise<void>) | null = null;
  let s3Dir: string | null = null;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  if (process.env.STORAGE_BACKEND === 's3' && !process.env.S3_ENDPOINT) {
    s3Dir = path.join(runDir, `seaweedfs-${process.pid}`);
    const s3 = await services.startSeaweedfs({ weed: tools.ensureSeaweedfs(), dataDir: s3Dir, logFile: path.join(runDir, 'seaweedfs.log') });
    stopS3 = s3.stop;
    Object.assign(process.env, {
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
      S3_BUCKET_PREFIX: `rs-test-${process.pid}-`,
    });
  }

  const workflowsIndex = path.join(ROOT, 'workflows', 'index.ts');
  // in this run's own folder: two jest runs at once (a developer's and an agent's) must not rewrite each other's bundle
  const bundlePath = path.join(logDir, 'workflow-bundle.js');
  if (fs.existsSync(workflowsIndex)) {
    const { writeWorkflowBundle } = await import('../../workers/workflowBundle');
    const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };
    await writeWorkflowBundle(bundlePath, { workflowsPath: workflowsIndex, workflowInterceptorModules: [] }, quiet);
    process.env.TEST_WORKFLOW_BUNDLE_PATH = bundlePath;
  }

  process.env.NODE_ENV = 'test';
  // SIGNING_SECRET has no built-in value: every run signs file links with a random key of its own
  process.env.SIGNING_SECRET = randomBytes(32).toString('hex');
  process.env.DATABASE_URL = databaseUrl;
  process.env.TEST_TEMPLATE_DATABASE = templateDatabase;
  process.env.TEMPORAL_ADDRESS = temporal.address;
  process.env.TEMPORAL_CLI_PATH = tools.ensureTemporalCli();
  process.env.TEMPORAL_TEST_SERVER_PATH = tools.ensureTemporalTestServer();
  process.env.STORAGE_DIR = path.join(runDir, `storage-${process.pid}`);
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
  process.env.APPROVAL_WINDOW = process.env.APPROVAL_WINDOW ?? '7 days';
  // Enhance Renders has no built-in access code: the tests (API and browser) unlock it with this one
  process.env.ENHANCE_ACCESS_CODE = process.env.ENHANCE_ACCESS_CODE || 'RENDERS-BETA';

  const handles: TestServices = { stopTemporal: temporal.stop, stopPostgres, stopS3, s3Dir, postgresDir, adminUrl, database, templateDatabase, stopChromium };
  (globalThis as { __testServices?: TestServices }).__testServices = handles;
  process.stdout.write(`\n[test setup] postgres db ${database}, temporal ${temporal.address}${process.env.STORAGE_BACKEND === 's3' ? `, S3 storage ${process.env.S3_ENDPOINT}` : ''}, ready in ${Date.now() - started} ms\n`);
}
