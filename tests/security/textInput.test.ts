/**
 * The text-input rule (domain/textInput.ts, applied by api/validation.ts): arbitrary Unicode, NUL, control
 * characters and unpaired surrogates thrown at every text field of every route never give a 5xx, and text that
 * breaks the rule (once trimmed, as trimming fields see it) is refused with 400 before a database or workflow sees it.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import fc from 'fast-check';
import { reportingRefusals } from '../../activities/failures';
import { failureStatus } from '../../domain/failureDetails';
import { createOnboardingActivities } from '../../activities/onboarding';
import { createApp } from '../../api/app';
import { DEFAULT_SIGN_IN_LIMITS } from '../../api/middleware/rateLimit';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { textInputProblem, type TextShape } from '../../domain/textInput';
import { insertAccount } from '../../services/accounts/accounts';
import { hashPassword } from '../../services/accounts/passwords';
import { createSession } from '../../services/accounts/sessions';
import { ONBOARDING_INVALID_INPUT } from '../../workflows/tryItOnboarding';
import { quietRuntime, renderBytes } from '../imageEdit/harness';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type JsonResponse, type TestServer } from '../support/http';
import { uniqueTaskQueue, withWorker } from '../support/temporal';

const RUNS = 30;
const onboardingQueue = uniqueTaskQueue('text-input-onboarding');

let server: TestServer;
let user: TestUser;
let projectId: string;
let renderId: string;

/** Any UTF-16 (lone surrogates included), and strings dense in the characters the rule is about. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .array(fc.constantFrom('\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u009f', '\ud800', '\udbff', '\udc00', '\n', '\t', '\r', 'a', 'é', '漢', '😀', ' ', '"', '\\'), { maxLength: 12 })
    .map((chars) => chars.join('')),
  fc.constantFrom('Harbour\u0000View', 'cafe\u0301', '\ud83d', 'x\udc00y', 'two\nlines'),
);

/** Sends `value` in one field; the property: never a 5xx, and a value breaking the rule is a 400. */
async function fuzzField(shape: TextShape, send: (value: string) => Promise<JsonResponse>): Promise<void> {
  await fc.assert(
    fc.asyncProperty(anyText, async (value) => {
      const res = await send(value);
      // fields such as the e-mail trim surrounding whitespace (tabs and line breaks included) before the rule, so only
      // what is left after a trim must be refused; a field that does not trim may refuse more (not asserted here)
      const refused = textInputProblem(value.trim(), shape) !== null;
      expect({ value: JSON.stringify(value), status: res.status < 500 ? 'not 5xx' : res.status }).toEqual({ value: JSON.stringify(value), status: 'not 5xx' });
      if (refused) expect({ value: JSON.stringify(value), status: res.status }).toEqual({ value: JSON.stringify(value), status: 400 });
    }),
    { numRuns: RUNS },
  );
}

function post(path: string, json: unknown, as: TestUser | null = user, method = 'POST'): Promise<JsonResponse> {
  return request(server.baseUrl, path, { method, json, token: as?.token });
}

/** A multipart upload with the file name written as browsers do (CR, LF and '"' percent-encoded), in UTF-8. */
async function uploadNamed(fileName: string, png: Buffer): Promise<JsonResponse> {
  const boundary = `----fuzz${randomUUID()}`;
  const escaped = fileName.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="projectId"\r\n\r\n${projectId}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="`),
    Buffer.from(escaped, 'utf8'),
    Buffer.from(`"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return request(server.baseUrl, '/api/upload/renders', { method: 'POST', token: user.token, body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
}

beforeAll(async () => {
  quietRuntime();
  // budgets of its own (own key prefix) in the migrations' table, so arbitrary e-mails never lock anything
  const limits = { ...DEFAULT_SIGN_IN_LIMITS, keyPrefix: `fuzz_${randomUUID().slice(0, 8)}`, perIp: { points: 10_000, durationSeconds: 60, blockSeconds: 1 }, perAccountAndIp: { points: 10_000, durationSeconds: 60, blockSeconds: 1 }, perAccount: { freeFailures: 10_000, windowSeconds: 60, baseDelaySeconds: 1, maxDelaySeconds: 1 } };
  server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, signInLimits: limits, taskQueues: { onboarding: onboardingQueue } }));
  user = await createTestUser(server.baseUrl);
  const project = await post('/api/projects', { name: 'Fuzz target' });
  projectId = project.body.project.id;
  const upload = await uploadNamed('harbour.png', await renderBytes(64, 48));
  expect(upload.status).toBe(200);
  renderId = upload.body.render.data.id;
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

describe('the text-input rule', () => {
  it('refuses NUL, control characters and unpaired surrogates with a clear 400, and keeps any other Unicode', async () => {
    const nul = await post('/api/projects', { name: 'Harbour\u0000View' });
    expect(nul.status).toBe(400);
    expect(nul.body).toEqual({ success: false, error: 'Project name contains a control character (U+0000), which is not allowed', code: 'VALIDATION_ERROR' });
    const surrogate = await post('/api/projects', { name: 'Harbour \ud800' });
    expect(surrogate.body.error).toBe('Project name contains invalid Unicode (an unpaired surrogate U+D800)');
    const newline = await post('/api/projects', { name: 'two\nlines' });
    expect(newline.body.error).toBe('Project name must be a single line (no line breaks or tabs)');
    // an unknown or loosely typed field is covered too: the rule runs over the whole input before the schema
    const nested = await post('/api/video-generation/start', { options: { movement: 'Zoom In', extra: ['ok', 'bad\u0007'] }, context: { projectId } });
    expect(nested.body).toEqual({ success: false, error: 'options.extra.1 contains a control character (U+0007), which is not allowed', code: 'VALIDATION_ERROR' });
    const prompt0 = await post('/api/ai-image-simple', { parameters: { prompt: 'dusk\u0000', baseImage: randomUUID() }, context: { projectId } });
    expect(prompt0.body).toEqual({ success: false, error: 'parameters.prompt contains a control character (U+0000), which is not allowed', code: 'VALIDATION_ERROR' });

    // however deep it hides
    const depth = 100_000;
    const deep = await request(server.baseUrl, '/api/projects', {
      method: 'POST',
      token: user.token,
      headers: { 'content-type': 'application/json' },
      body: `{"name":"ok","extra":${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}}`,
    });
    expect(deep.status).toBe(400);
    expect(deep.body.error).toBe('extra.0.0.0.0.0.0.0... contains a control character (U+0000), which is not allowed');

    const kept = await post('/api/projects', { name: 'Haus am See 漢字 café 😀 ÅÄÖ' });
    expect(kept.status).toBe(201);
    expect(kept.body.project.name).toBe('Haus am See 漢字 café 😀 ÅÄÖ');
    // prompts are multi-line: line breaks and tabs pass the rule (this one then fails on its unknown source)
    const prompt = await post('/api/ai-image-simple', { parameters: { prompt: 'dusk\n\twarm windows', baseImage: randomUUID() }, context: { projectId } });
    expect(prompt.body.code).not.toBe('VALIDATION_ERROR');
    expect(prompt.status).toBe(404);
  });

  it('maps a PostgreSQL data error that still gets through to 400, never 500', async () => {
    // a route that hands PostgreSQL text it refuses as data: 22P02 (bad uuid text), 22021 (NUL in UTF-8)
    const app = createApp({ config: loadConfig(), knex: testKnex(), logger });
    app.use(async (ctx, next) => {
      if (ctx.path === '/api/test/bad-uuid') ctx.body = await testKnex().raw('select ?::uuid as id', ['not-a-uuid']);
      else if (ctx.path === '/api/test/nul') ctx.body = await testKnex()('projects').where({ name: 'a\u0000b' }).first();
      else await next();
    });
    const raw = await serve(app);
    try {
      for (const path of ['/api/test/bad-uuid', '/api/test/nul']) {
        const res = await request(raw.baseUrl, path, { token: user.token });
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 400,
          body: { success: false, error: 'The request contains a value that is not valid input', code: 'INVALID_INPUT' },
        });
      }
    } finally {
      await raw.close();
    }
  });

  it('fails the onboarding activity at once, without retries, on a file name no retry can fix', async () => {
    const activities = createOnboardingActivities({ knex: testKnex() });
    for (const input of [
      { userId: user.id, fileName: 'house\u0000.jpg' },
      { userId: 'not-a-uuid', fileName: 'house.jpg' },
    ]) {
      const err = await activities.createOnboardingProject(input).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: ONBOARDING_INVALID_INPUT, nonRetryable: true });
    }
  });

  it('turns a PostgreSQL data error inside any reporting activity into a non-retryable 400 failure', async () => {
    const err = await reportingRefusals(() => testKnex().raw('select ?::uuid as id', ['not-a-uuid'])).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'INVALID_INPUT', nonRetryable: true });
    expect(failureStatus(err as ApplicationFailure)).toBe(400);
  });
});

/**
 * A new, verified user with a session, written by the account service as sign-up writes it (user, personal workspace,
 * starting credits): for the try-it runs, which each need a user who just signed up, without a sign-up request and
 * its password hash each.
 */
let passwordHash: Promise<string> | null = null;
async function newUser(): Promise<Pick<TestUser, 'token'>> {
  passwordHash ??= hashPassword(`pw-${randomUUID()}`);
  const hash = await passwordHash;
  const knex = testKnex();
  const user = await knex.transaction((trx) => insertAccount(trx, { email: `fz-${randomUUID()}@example.test`, passwordHash: hash, name: 'Fuzz', emailVerifiedAt: new Date() }));
  return { token: (await createSession(knex, user.id, 1)).token };
}

// the fields of one test are fuzzed at once (each its own property of RUNS values): they are independent requests
describe('arbitrary Unicode at every text field: no 5xx, rule-breaking text is a 400', () => {
  it('sign-up name, e-mail and password', async () => {
    const valid = () => ({ name: 'Fuzz', email: `fz-${randomUUID()}@example.test`, password: `pw-${randomUUID()}` });
    await Promise.all([
      fuzzField('single-line', (v) => post('/api/auth/signup', { ...valid(), name: v }, null)),
      fuzzField('single-line', (v) => post('/api/auth/signup', { ...valid(), email: v }, null)),
      fuzzField('multi-line', (v) => post('/api/auth/signup', { ...valid(), password: v }, null)),
    ]);
  });

  it('sign-in e-mail and password', async () => {
    await Promise.all([
      fuzzField('single-line', (v) => post('/api/auth/signin', { email: v, password: 'whatever-1' }, null)),
      fuzzField('multi-line', (v) => post('/api/auth/signin', { email: user.email, password: v }, null)),
    ]);
  });

  it('profile name', async () => {
    await fuzzField('single-line', (v) => post('/api/profile', { name: v }, user, 'PATCH'));
  });

  it('project create and rename (name, address)', async () => {
    await Promise.all([
      fuzzField('single-line', (v) => post('/api/projects', { name: v })),
      fuzzField('single-line', (v) => post('/api/projects', { name: 'Fuzz', address: v })),
      fuzzField('single-line', (v) => post(`/api/projects/${projectId}`, { name: v }, user, 'PATCH')),
      fuzzField('single-line', (v) => post(`/api/projects/${projectId}`, { address: v }, user, 'PATCH')),
    ]);
  });

  it('content rename', async () => {
    await fuzzField('single-line', (v) => post(`/api/projects/${projectId}/content/renders/${renderId}`, { name: v }, user, 'PATCH'));
  });

  it('image edit prompt, description, intent, platform and source', async () => {
    // an unknown source: text that passes the rule ends in a 404 before any workflow starts
    const body = (parameters: Record<string, unknown>, context: Record<string, unknown> = {}) => ({
      parameters: { prompt: 'dusk', baseImage: randomUUID(), ...parameters },
      context: { projectId, ...context },
    });
    await Promise.all([
      fuzzField('multi-line', (v) => post('/api/ai-image-simple', body({ prompt: v }))),
      fuzzField('multi-line', (v) => post('/api/ai-image-simple', body({ imageDescription: v }))),
      fuzzField('multi-line', (v) => post('/api/ai-image-simple', body({}, { userIntent: v }))),
      fuzzField('single-line', (v) => post('/api/ai-image-simple', body({}, { platform: v }))),
      fuzzField('multi-line', (v) => post('/api/ai-image-simple', body({ baseImage: v }))),
    ]);
  });

  it('clip start fields', async () => {
    const start = (options: Record<string, unknown>, context: Record<string, unknown> = {}) =>
      post('/api/video-generation/start', { options: { movement: 'Zoom In', ...options }, context: { projectId, renderId: randomUUID(), ...context } });
    await Promise.all([
      fuzzField('single-line', (v) => start({ movement: v })),
      fuzzField('single-line', (v) => start({ platform: v })),
      fuzzField('single-line', (v) => start({ aspectRatio: v })),
      fuzzField('multi-line', (v) => start({ originalPrompt: v })),
      fuzzField('single-line', (v) => start({ imageUrl: v })),
      fuzzField('single-line', (v) => start({}, { projectId: v })),
      fuzzField('single-line', (v) => start({}, { renderId: v })),
      fuzzField('multi-line', (v) => post('/api/video-generation/portrait/start', { projectId, renderId: randomUUID(), cameraMovement: 'Zoom In', prompt: v })),
    ]);
  });

  it('try-it file name (a real onboarding worker creates the project from it)', async () => {
    await withWorker({ taskQueue: onboardingQueue, activities: createOnboardingActivities({ knex: testKnex() }) }, async () => {
      await fc.assert(
        fc.asyncProperty(anyText, async (value) => {
          const someone = await newUser();
          const res = await request(server.baseUrl, '/api/onboarding/try-it', { method: 'POST', json: { fileName: value, platform: 'YouTube' }, token: someone.token });
          expect({ value: JSON.stringify(value), status: res.status < 500 ? 'not 5xx' : res.status }).toEqual({ value: JSON.stringify(value), status: 'not 5xx' });
          if (textInputProblem(value.trim(), 'single-line') !== null) expect(res.status).toBe(400);
        }),
        { numRuns: RUNS },
      );
    });
  });

  it('upload file name', async () => {
    const png = await renderBytes(32, 24);
    await fc.assert(
      fc.asyncProperty(anyText, async (value) => {
        const res = await uploadNamed(value, png);
        expect({ value: JSON.stringify(value), status: res.status < 500 ? 'not 5xx' : res.status }).toEqual({ value: JSON.stringify(value), status: 'not 5xx' });
        // what the server receives: UTF-8 (an unpaired surrogate becomes U+FFFD) with CR, LF and '"' escaped;
        // a name with a slash or backslash is cut to its last part (and quoted-string escapes), so judged only without
        const received = Buffer.from(value, 'utf8').toString('utf8').replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
        if (!/[\\/]/.test(value) && textInputProblem(received, 'single-line') !== null) expect(res.status).toBe(400);
      }),
      { numRuns: RUNS },
    );
  });
});
