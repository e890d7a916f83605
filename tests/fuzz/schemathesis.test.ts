/**
 * The API fuzzed against its own document: Schemathesis (PyPI, installed into .tools by scripts/lib/tools.js) runs
 * every operation of /api/openapi.json against the real app (PostgreSQL, Temporal with real workers, the fake
 * Stripe) as a signed-in admin user with seeded content, and checks that nothing answers 5xx and that every status,
 * content type and body is the one the document describes. Every operation gets the coverage phase's cases (each
 * boundary and wrong-type value the schema defines) and up to MAX_EXAMPLES generated cases; an input already sent is
 * not sent again (its outcome stands for the copy).
 *
 * Alone: `npx jest tests/fuzz` (FUZZ_MAX_EXAMPLES=<n> for more or fewer cases per operation).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createProviders } from '../../providers';
import { createSession } from '../../services/accounts/sessions';
import { createStorage } from '../../storage';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe, type FakeStripe } from '../support/fakeStripe';
import { request, serve, type TestServer } from '../support/http';
import { startWorkers, renderBytes, generateImage, type RunningWorkers } from '../imageEdit/harness';
import { uniqueTaskQueue } from '../support/temporal';
import { testNote } from '../support/testNotes';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools');

const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 10);
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance'];
const FUZZ_DIR = __dirname;
const RUN_DIR = path.join(FUZZ_DIR, '..', '..', '.data', 'test', 'fuzz');

jest.setTimeout(15 * 60_000);

let stripe: FakeStripe;
let server: TestServer;
let workers: RunningWorkers;
let tokenIssuer: http.Server;
let tokenUrl: string;
let user: TestUser;

beforeAll(async () => {
  const knex = testKnex();
  stripe = await startFakeStripe();
  const config = {
    ...loadConfig(),
    stripeSecretKey: FAKE_STRIPE_SECRET_KEY,
    stripeWebhookSecret: stripe.webhookSecret,
    stripeApiBase: stripe.baseUrl,
    enhanceAccessCode: 'FUZZ-ACCESS-CODE',
  };
  const taskQueues = {
    onboarding: uniqueTaskQueue('fuzz-onboarding'),
    generation: uniqueTaskQueue('fuzz-generation'),
    media: uniqueTaskQueue('fuzz-media'),
    approvals: uniqueTaskQueue('fuzz-approvals'),
    accountData: uniqueTaskQueue('fuzz-account-data'),
  };
  const storage = createStorage(config);
  workers = await startWorkers(taskQueues, createActivities({ knex, config, logger, storage, providers: createProviders(config) }));
  // its invitation look-ups and new workspaces are counted apart from the rest of the run's (domain/actionLimits.ts)
  server = await serve(createApp({ config, knex, logger, taskQueues, actionLimits: { keyPrefix: `fuzz${process.pid}` } }));

  // the fuzz user: an admin (so admin routes are reached too) with a project, a render and a pending AI image
  user = await createTestUser(server.baseUrl, { name: 'Fuzz User' });
  await makeAdmin(knex, user.id);
  const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Fuzzed Harbour' } });
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(await renderBytes(320, 240))], { type: 'image/png' }), 'fuzz-render.png');
  const upload = await request<{ render: { data: { id: string } } }>(server.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect(upload.status).toBe(200);
  // past the Enhance Renders access code, so its routes are reached too
  const unlock = await request(server.baseUrl, '/api/enhance-set/access/unlock', { token: user.token, json: { code: 'FUZZ-ACCESS-CODE' } });
  expect(unlock.status).toBe(200);
  const edit = await generateImage(server.baseUrl, user, { baseImage: upload.body.render.data.id, projectId: project.body.project.id });
  expect(edit.status).toBe(200);

  // a fresh session of the fuzz user per call: Schemathesis' auth hook fetches one every second
  tokenIssuer = http.createServer((req, res) => {
    createSession(knex, user.id, 1).then(
      (session) => res.end(session.token),
      () => {
        res.statusCode = 500;
        res.end();
      },
    );
  });
  await new Promise<void>((resolve) => tokenIssuer.listen(0, '127.0.0.1', resolve));
  tokenUrl = `http://127.0.0.1:${(tokenIssuer.address() as AddressInfo).port}/token`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (tokenIssuer ? tokenIssuer.close(() => resolve()) : resolve()));
  await server?.close();
  await workers?.stop();
  await stripe?.close();
  await closeTestKnex();
});

interface RunResult {
  code: number | null;
  output: string;
}

function runSchemathesis(args: string[], env: Record<string, string>): Promise<RunResult> {
  const st = tools.ensureSchemathesis() as { python: string; script: string; pythonPath: string };
  // its working folder (where it keeps a cache) is the run's data folder; the hooks module is found on PYTHONPATH
  fs.mkdirSync(RUN_DIR, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn(st.python, [st.script, ...args], {
      cwd: RUN_DIR,
      env: { ...process.env, ...env, PYTHONPATH: [st.pythonPath, FUZZ_DIR].join(path.delimiter), NO_COLOR: '1', PYTHONUNBUFFERED: '1' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the API under Schemathesis', () => {
  it('answers every operation of its document without a 5xx and as documented', async () => {
    const started = Date.now();
    // the document is read here and handed over as a file: Schemathesis loads a URL with a fixed 10 s deadline (not
    // --request-timeout's), which a busy machine's first render of the document once outlasted
    const documentRes = await fetch(`${server.baseUrl}/api/openapi.json`);
    expect(documentRes.status).toBe(200);
    fs.mkdirSync(RUN_DIR, { recursive: true });
    const documentFile = path.join(RUN_DIR, `openapi-${process.pid}.json`);
    fs.writeFileSync(documentFile, await documentRes.text());
    const { code, output } = await runSchemathesis(
      [
        '--config-file',
        path.join(FUZZ_DIR, 'schemathesis.toml'),
        '--no-color',
        'run',
        documentFile,
        '--url',
        server.baseUrl,
        '--checks',
        CHECKS.join(','),
        '--phases',
        'examples,coverage,fuzzing',
        '--max-examples',
        String(MAX_EXAMPLES),
        // a generated input equal to one already sent (an operation with few or no parameters yields many) is not sent again
        '--generation-unique-inputs',
        // one worker: Python 3.11's ast.parse is not thread-safe, and Hypothesis calls it while generating
        '--workers',
        '1',
        '--request-timeout',
        '30',
        '--seed',
        process.env.FUZZ_SEED ?? '20261123',
        '--generation-database',
        'none',
      ],
      { FUZZ_TOKEN_URL: tokenUrl, SCHEMATHESIS_HOOKS: 'schemathesis_hooks' },
    );
    const seconds = Math.round((Date.now() - started) / 1000);
    // the whole report, for reading the failures one by one
    const logFile = path.join(RUN_DIR, `schemathesis-${process.pid}.log`);
    fs.writeFileSync(logFile, output);
    const summary = output.split('\n').filter((line) => /operations|test cases|passed|failed|errors?/i.test(line)).slice(-12).join('\n');
    testNote(`[fuzz] schemathesis finished in ${seconds}s with exit code ${code}\n${summary}`);
    if (code !== 0) throw new Error(`Schemathesis found problems (exit ${code}; the whole report: ${logFile}):\n${output.slice(-20_000)}`);
  });
});
