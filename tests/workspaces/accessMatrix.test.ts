/**
 * Issue 27, acceptance 3: the access matrix. Every operation of the OpenAPI document that needs a session must say
 * what it does in a workspace (`x-workspace-action`, api/openapi/describe.ts): an unclassified route fails here.
 * Each operation with a workspace action is then called by every role of one team workspace (owner, admin, member,
 * viewer) and by a non-member, against that workspace's resources (one of each kind, files stored):
 *
 * - a role below the action's lowest role gets 403 WORKSPACE_FORBIDDEN, the non-member 404 (and, calling from their
 *   own workspace without the header, a request naming the workspace's resources finds nothing either: 404);
 * - a refused call changes nothing: every table's rows (but sign-in budgets, sessions and the realtime outbox), the
 *   workspace's balance, reserved credits, ledger sum and active reservations, and every stored file;
 * - a role the action allows is not refused by the workspace check (each such call of an operation that may change
 *   something gets a workspace of its own, so calls that delete or spend do not disturb the others).
 *
 * The refused calls and the reads of every operation go to one workspace seeded once: a refused call changes nothing
 * (which is what is checked around each operation's refused calls), so the next operation finds it as it was.
 *
 * The app runs on a database and storage of this file's own, so "nothing changed" is exact while other test files
 * run; workflows start on task queues nobody polls (nothing waits for them).
 *
 * It also checks that the role table in docs/security.md and README.md says what domain/workspaceRoles.ts does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { createApp } from '../../api/app';
import { buildOpenApiDocument } from '../../api/openapi/document';
import { buildRouters } from '../../api/routes';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { connectDatabase } from '../../db/connection';
import { TASK_QUEUES, type TaskQueueName } from '../../domain/taskQueues';
import { roleAllows, WORKSPACE_ACTIONS, WORKSPACE_HEADER, WORKSPACE_ROLES, type WorkspaceAction } from '../../domain/workspaceRoles';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createStorage, storageConfigOf, type Storage } from '../../storage';
import { createTestUser } from '../support/accounts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';
import { createMatrixWorkspace, removeMatrixWorkspaces, snapshot, snapshotChanges, TINY_PNG, type MatrixResources, type MatrixRole, type MatrixUsers } from '../support/accessMatrixFixtures';
import { allowedAnswers, buildRequest, send, UnfillableError, type MatrixAnswer, type MatrixOperation } from '../support/accessMatrixRequests';
import { uniqueTaskQueue, workflowTerminator } from '../support/temporal';
import { serve, type TestServer } from '../support/http';

const ROOT = path.resolve(__dirname, '..', '..');

// the document of the routers the app mounts (their handlers are never called: no database is touched)
const documentKnex = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL ?? 'postgres://invalid', pool: { min: 0, max: 1 } });
const documentRouters = buildRouters({ config: loadConfig(), knex: documentKnex, logger });
const document = buildOpenApiDocument(documentRouters) as unknown as { paths: Record<string, Record<string, Record<string, any>>> };
const operations: MatrixOperation[] = Object.entries(document.paths).flatMap(([p, item]) =>
  Object.entries(item).map(([method, operation]) => ({ method, path: p, operation })),
);
const secured = operations.filter((op) => Array.isArray(op.operation.security) && op.operation.security.length > 0);
const actionOf = (op: MatrixOperation): WorkspaceAction | 'self' | undefined => op.operation['x-workspace-action'];
const isAction = (value: unknown): value is WorkspaceAction => typeof value === 'string' && value in WORKSPACE_ACTIONS;
const walked = secured.filter((op) => isAction(actionOf(op)));
const label = (op: MatrixOperation) => `${op.method.toUpperCase()} ${op.path}`;

let db: ScratchDatabase;
let appKnex: Knex;
let storage: Storage;
let server: TestServer;
let users: MatrixUsers;
let config: AppConfig;
let taskQueues: Record<TaskQueueName, string>;

beforeAll(async () => {
  db = await createScratchDatabase('matrix', { migrated: true });
  await db.knex.migrate.latest();
  const base = loadConfig();
  const tag = randomBytes(4).toString('hex');
  config = {
    ...base,
    databaseUrl: db.url,
    storageDir: path.join(base.storageDir, `access-matrix-${tag}`),
    s3: { ...base.s3, bucketPrefix: `${base.s3.bucketPrefix}am${tag}-` },
  };
  storage = createStorage(storageConfigOf(config));
  appKnex = connectDatabase(db.url, { min: 0, max: 10 });
  taskQueues = Object.fromEntries(Object.keys(TASK_QUEUES).map((name) => [name, uniqueTaskQueue(`matrix-${name}`)])) as Record<TaskQueueName, string>;
  server = await serve(createApp({ config, knex: appKnex, logger, taskQueues }));
  const roles: Array<MatrixRole | 'target'> = [...WORKSPACE_ROLES, 'nonMember', 'target'];
  const made = await Promise.all(roles.map((role) => createTestUser(server.baseUrl, { name: `Matrix ${role}`, knex: db.knex })));
  users = Object.fromEntries(roles.map((role, i) => [role, made[i]])) as MatrixUsers;
  // Enhance Renders' access code is each user's own ('self'): unlocked for all, so its routes reach the workspace check
  await db.knex('profiles').whereIn('id', made.map((u) => u.id)).update({ enhance_unlocked_at: db.knex.fn.now() });
}, 120_000);

afterAll(async () => {
  if (taskQueues) await endStartedWorkflows();
  await terminator.close();
  await server?.close();
  await appKnex?.destroy();
  await documentKnex.destroy();
  await closeTemporalClient();
  await db?.drop();
  if (config) fs.rmSync(config.storageDir, { recursive: true, force: true });
});

describe('classification', () => {
  it('covers the whole API: the document has the session routes of every area', () => {
    expect(secured.length).toBeGreaterThan(50);
  });

  it('every operation that needs a session says what it does in a workspace (x-workspace-action)', () => {
    const unclassified = secured.filter((op) => actionOf(op) === undefined).map(label);
    const unknown = secured.filter((op) => actionOf(op) !== undefined && actionOf(op) !== 'self' && !isAction(actionOf(op))).map((op) => `${label(op)}: ${String(actionOf(op))}`);
    expect({ unclassified, unknown }).toEqual({ unclassified: [], unknown: [] });
  });

  it('public operations carry no workspace action (they cannot check one)', () => {
    const publicWithAction = operations.filter((op) => !secured.includes(op) && actionOf(op) !== undefined).map(label);
    expect(publicWithAction).toEqual([]);
  });
});

describe('the role table in the docs', () => {
  it("docs/security.md's table of actions is domain/workspaceRoles.ts's WORKSPACE_ACTIONS", () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8');
    const rows = [...doc.matchAll(/^\|\s*`(\w+)`\s*\|\s*(viewer|member|admin|owner)\s*\|/gm)].map((m) => [m[1], m[2]]);
    expect(rows.length).toBeGreaterThan(0);
    expect(Object.fromEntries(rows)).toEqual(WORKSPACE_ACTIONS);
    expect(rows.length).toBe(Object.keys(WORKSPACE_ACTIONS).length);
  });

  it('README.md and docs/security.md list the four roles in order, each including the ones before', () => {
    for (const file of ['README.md', path.join('docs', 'security.md')]) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      const roles = [...text.matchAll(/^\|\s*\*{0,2}(Viewer|Member|Admin|Owner)\*{0,2}\s*\|/gm)].map((m) => m[1].toLowerCase());
      expect({ file, roles }).toEqual({ file, roles: [...WORKSPACE_ROLES] });
    }
  });
});

function refusalOf(answer: MatrixAnswer): string {
  return `${answer.status}${answer.code ? ` ${answer.code}` : ''}${answer.error ? ` "${answer.error.slice(0, 120)}"` : ''}`;
}

/** How long an allowed call is waited for at most: calls that wait for their workflow (nobody runs it here) are left then. */
const ALLOWED_WAIT_MS = 4_000;

/** Ends the workflows the allowed calls started on this file's task queues, so no request waits on one afterwards. */
const terminator = workflowTerminator('access matrix: done');
async function endStartedWorkflows(): Promise<void> {
  await terminator.terminateRunning(Object.values(taskQueues));
}

/** Folders on this machine where a request can leave a file: tus uploads in progress (any backend), local writes not yet finished. */
const localDirs = () => ['.tus-uploads', ...(config.storageBackend === 'local' ? ['.incoming'] : [])].map((dir) => path.join(path.resolve(config.storageDir), dir));

/** A tus upload in progress in the workspace, opened by its owner through the API (so the tus store has its file). */
async function openUpload(workspaceId: string, projectId: string): Promise<string> {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const res = await fetch(`${server.baseUrl}/api/uploads/tus`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${users.owner.token}`,
      [WORKSPACE_HEADER]: workspaceId,
      'tus-resumable': '1.0.0',
      'upload-length': String(TINY_PNG.length * 2),
      'upload-metadata': `filename ${b64('big.png')},filetype ${b64('image/png')},projectId ${b64(projectId)}`,
    },
  });
  const location = res.headers.get('location');
  if (res.status !== 201 || !location) throw new Error(`opening a tus upload answered ${res.status} ${await res.text()}`);
  return location.split('/').pop()!;
}

const seed = () => createMatrixWorkspace(db.knex, storage, users, { openUpload });

/** The workspace every operation's refused calls and reads go to (seeded once; removal passes it over). */
const kept: MatrixResources[] = [];
const removeWorkspaces = () => removeMatrixWorkspaces(db.knex, storage, kept);

const EXPECTED = { forbidden: '403 WORKSPACE_FORBIDDEN', notFound: '404', refused: 'a refusal (4xx)' } as const;

function wanted(expect: keyof typeof EXPECTED, a: MatrixAnswer, method: string): boolean {
  // a HEAD answer has no body to carry the code
  if (expect === 'forbidden') return a.status === 403 && (a.code === 'WORKSPACE_FORBIDDEN' || method === 'head');
  if (expect === 'notFound') return a.status === 404;
  return a.status >= 400 && a.status < 500 && a.status !== 401;
}

const isWorkspaceRefusal = (a: MatrixAnswer) => (a.status === 403 && a.code === 'WORKSPACE_FORBIDDEN') || (a.status === 404 && a.code === 'WORKSPACE_NOT_FOUND');

describe('the access matrix', () => {
  it('walks every operation with a workspace action', () => {
    expect(walked.length).toBeGreaterThan(0);
  });

  it('notices a changed row, a removed row, a ledger change and a removed file (the "nothing changed" check can fail)', async () => {
    const resources = await createMatrixWorkspace(db.knex, storage, users);
    const before = await snapshot(db.knex, storage, resources.workspaceId);
    await db.knex('projects').where({ id: resources.projectId }).update({ name: 'Renamed' });
    await db.knex('content_lineage').where({ item_id: resources.clipId }).delete();
    await db.knex('profiles').where({ id: resources.workspaceId }).decrement('credits', 1);
    const file = before.files.find((f) => f.startsWith('renders/'))!;
    const [, stored] = /^renders\/(.+) \(\d+ B\)$/.exec(file)!;
    await storage.objects.remove('renders', [stored]);
    const changes = snapshotChanges(before, await snapshot(db.knex, storage, resources.workspaceId));
    expect(changes).toEqual(
      expect.arrayContaining(['projects: rows changed', expect.stringMatching(/^content_lineage: \d+ -> \d+ rows$/), expect.stringMatching(/^workspace balance: /), `files removed: ${file}`]),
    );
    await removeWorkspaces();
  });

  it('fails with a clear message for a path parameter it cannot fill', () => {
    const op: MatrixOperation = { method: 'get', path: '/api/things/{thingId}', operation: { parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }] } };
    expect(() => buildRequest(op, {} as never)).toThrow(/GET \/api\/things\/\{thingId\}: no value for path parameter "thingId"\. Add it to VALUES/);
  });

  // one test per operation, so the report names each operation that does not hold
  test.each(walked.map((op) => [label(op), op] as const))('%s', async (_name, op) => {
    const action = actionOf(op) as WorkspaceAction;
    const problems: string[] = [];
    if (kept.length === 0) kept.push(await seed());
    const resources = kept[0];
    let request;
    try {
      request = buildRequest(op, resources);
    } catch (err) {
      if (err instanceof UnfillableError) throw new Error(`${err.message} (a route the access matrix cannot call is not classified)`);
      throw err;
    }

    // refused: the roles below the action's, the non-member; each changes nothing
    const refused: Array<{ who: string; token: string; workspace: string | null; expect: keyof typeof EXPECTED }> = [
      ...WORKSPACE_ROLES.filter((role) => !roleAllows(role, action)).map((role) => ({ who: role, token: users[role].token, workspace: resources.workspaceId, expect: 'forbidden' as const })),
      { who: 'non-member', token: users.nonMember.token, workspace: resources.workspaceId, expect: 'notFound' },
    ];
    // the non-member calling from their own workspace: the ids name nothing there
    if (request.namesResource) refused.push({ who: 'non-member in their own workspace', token: users.nonMember.token, workspace: null, expect: 'refused' });
    // all at once, between one snapshot before and one after: together they change nothing, so none of them does
    const before = await snapshot(db.knex, storage, resources.workspaceId, localDirs());
    const refusals = await Promise.all(refused.map((call) => send(server.baseUrl, buildRequest(op, resources), call.token, call.workspace)));
    for (const [i, call] of refused.entries()) {
      if (!wanted(call.expect, refusals[i], op.method)) problems.push(`${call.who}: expected ${EXPECTED[call.expect]}, got ${refusalOf(refusals[i])}`);
    }
    const changes = snapshotChanges(before, await snapshot(db.knex, storage, resources.workspaceId, localDirs()));
    if (changes.length) problems.push(`refused calls (${refused.map((call) => call.who).join(', ')}) changed ${changes.join('; ')}`);

    // allowed: each role the action allows; a call that may change something in a workspace of its own
    const reads = op.method === 'get' || op.method === 'head';
    const allowed = WORKSPACE_ROLES.filter((r) => roleAllows(r, action));
    const workspaces = reads ? allowed.map(() => resources) : await Promise.all(allowed.map(() => seed()));
    // at once: a call that waits for its workflow (nobody runs it) answers when it is ended, or is left after ALLOWED_WAIT_MS
    const answers = await allowedAnswers(allowed.map((role, i) => send(server.baseUrl, buildRequest(op, workspaces[i]), users[role].token, workspaces[i].workspaceId, ALLOWED_WAIT_MS)), endStartedWorkflows);
    for (const [i, role] of allowed.entries()) {
      const answer = answers[i];
      if (isWorkspaceRefusal(answer) || answer.status === 401) problems.push(`${role}: allowed to ${action}, but got ${refusalOf(answer)}`);
    }
    await endStartedWorkflows();
    await removeWorkspaces();
    expect(problems).toEqual([]);
  }, 120_000);
});

/**
 * Guest routes of review links (issue 43 item 4): public, each marked `x-review-link` (the token, or the guest
 * session of the link its path names, is the credential). A link of workspace A reaches nothing of workspace B,
 * nothing of A that is not on the link, and no action the link does not allow (the matrix's links are comment only);
 * a session is valid for its own link only; every refusal changes nothing.
 */
describe('guest routes (public by review link)', () => {
  const guestOps = operations.filter((op) => op.operation['x-review-link'] !== undefined);
  const sessionOps = guestOps.filter((op) => op.operation['x-review-link'] === 'session');
  const GUEST = { name: 'Matrix Guest', email: 'matrix-guest@example.test' };

  it('every guest route is public and says what it is for; nothing else under /api/guest or /r is', () => {
    expect(guestOps.length).toBeGreaterThanOrEqual(7);
    expect(guestOps.filter((op) => secured.includes(op)).map(label)).toEqual([]);
    const unmarked = operations.filter((op) => (op.path.startsWith('/api/guest/') || op.path.startsWith('/r/')) && op.operation['x-review-link'] === undefined).map(label);
    expect(unmarked).toEqual([]);
  });

  async function openGuest(token: string): Promise<string> {
    const res = await fetch(`${server.baseUrl}/api/guest/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    expect(res.status).toBe(201);
    return (res.headers.get('set-cookie') ?? '').split(';')[0];
  }

  /** The request for a guest operation, naming `names` (item, thread) under link `linkId`. */
  function guestCall(op: MatrixOperation, linkId: string, names: { itemId: string; threadId: string }, cookie: string | null) {
    const url = op.path.replace('{linkId}', linkId).replace('{itemId}', names.itemId).replace('{threadId}', names.threadId);
    const body = op.method === 'post' ? JSON.stringify({ guest: GUEST, ...(url.endsWith('/approve') ? {} : url.endsWith('/request-changes') ? { request: 'Warmer please' } : { body: 'Matrix guest comment' }) }) : undefined;
    return fetch(`${server.baseUrl}${url}`, { method: op.method.toUpperCase(), headers: { ...(cookie ? { cookie } : {}), ...(body ? { 'content-type': 'application/json' } : {}) }, body });
  }

  test.each(sessionOps.map((op) => [label(op), op] as const))('%s', async (_name, op) => {
    const [a, b] = await Promise.all([seed(), seed()]);
    const cookieA = await openGuest(a.reviewLinkToken);
    const cookieB = await openGuest(b.reviewLinkToken);
    const problems: string[] = [];
    const onLink = { itemId: a.approvalId, threadId: a.commentThreadId };
    const calls: Array<{ who: string; linkId: string; names: { itemId: string; threadId: string }; cookie: string | null; expect: number[] }> = [
      { who: 'no session', linkId: a.reviewLinkId, names: onLink, cookie: null, expect: [401] },
      { who: "another link's session", linkId: a.reviewLinkId, names: onLink, cookie: cookieB, expect: [401] },
      { who: "A's session under B's link", linkId: b.reviewLinkId, names: { itemId: b.approvalId, threadId: b.commentThreadId }, cookie: cookieA.replace(/^rs_review_[0-9a-f]+/, `rs_review_${b.reviewLinkId.replace(/-/g, '')}`), expect: [401] },
    ];
    if (op.path.includes('{itemId}') || op.path.includes('{threadId}')) {
      // workspace B's item and thread, and A's item and thread that are not on the link
      calls.push({ who: "workspace B's item", linkId: a.reviewLinkId, names: { itemId: b.approvalId, threadId: b.commentThreadId }, cookie: cookieA, expect: [404] });
      calls.push({ who: "A's items not on the link", linkId: a.reviewLinkId, names: { itemId: a.clipId, threadId: a.commentThreadId }, cookie: cookieA, expect: [404] });
    }
    if (/\/(approve|request-changes)$/.test(op.path)) calls.push({ who: 'a decision on a comment-only link', linkId: a.reviewLinkId, names: onLink, cookie: cookieA, expect: [403] });
    // one snapshot of each workspace before the refused calls and one after: together they change nothing
    const before = await Promise.all([snapshot(db.knex, storage, a.workspaceId), snapshot(db.knex, storage, b.workspaceId)]);
    for (const call of calls) {
      const res = await guestCall(op, call.linkId, call.names, call.cookie);
      if (!call.expect.includes(res.status)) problems.push(`${call.who}: expected ${call.expect.join(' or ')}, got ${res.status} ${(await res.text()).slice(0, 160)}`);
    }
    const after = await Promise.all([snapshot(db.knex, storage, a.workspaceId), snapshot(db.knex, storage, b.workspaceId)]);
    const changes = [...snapshotChanges(before[0], after[0]), ...snapshotChanges(before[1], after[1])];
    if (changes.length) problems.push(`refused calls (${calls.map((call) => call.who).join(', ')}) changed ${changes.join('; ')}`);
    // the link revoked: 410, whatever session was opened before
    await db.knex('review_links').where({ id: a.reviewLinkId }).update({ revoked_at: db.knex.fn.now() });
    const gone = await guestCall(op, a.reviewLinkId, onLink, cookieA);
    if (gone.status !== 410) problems.push(`a revoked link: expected 410, got ${gone.status}`);
    await removeWorkspaces();
    expect(problems).toEqual([]);
  }, 120_000);

  it('the token routes: an unknown token finds nothing (404), a revoked link answers 410, and neither changes anything', async () => {
    const a = await seed();
    const before = await snapshot(db.knex, storage, a.workspaceId);
    expect((await fetch(`${server.baseUrl}/r/${'Z'.repeat(43)}`)).status).toBe(404);
    const unknown = await fetch(`${server.baseUrl}/api/guest/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'Z'.repeat(43) }) });
    expect(unknown.status).toBe(404);
    await db.knex('review_links').where({ id: a.reviewLinkId }).update({ revoked_at: db.knex.fn.now() });
    const mid = await snapshot(db.knex, storage, a.workspaceId);
    expect(snapshotChanges(before, mid).filter((c) => !c.startsWith('review_links'))).toEqual([]);
    expect((await fetch(`${server.baseUrl}/r/${a.reviewLinkToken}`)).status).toBe(410);
    const revoked = await fetch(`${server.baseUrl}/api/guest/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: a.reviewLinkToken }) });
    expect(revoked.status).toBe(410);
    expect(snapshotChanges(mid, await snapshot(db.knex, storage, a.workspaceId))).toEqual([]);
    await removeWorkspaces();
  });
});
