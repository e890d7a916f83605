/**
 * Issue 29, acceptance 1: the access matrix for personal access tokens. Every operation of the OpenAPI document that
 * needs a session is called with the workspace owner's tokens, one per scope (read, generate, approve, billing:read),
 * against a team workspace holding one resource of every kind (tests/support/accessMatrixFixtures.ts, the session
 * matrix's world and request builder):
 *
 * - the document names the scope each operation needs (`x-token-scope`, null where no token may call it), and it is
 *   the one api/tokenScopes.ts derives from the operation's workspace action;
 * - a token without that scope gets 403 naming it (TOKEN_SCOPE_MISSING), or TOKEN_NOT_ALLOWED where no token may
 *   call the operation (even one with every scope), and nothing changes: every table's rows (but sign-in budgets,
 *   sessions, tokens' last use and the realtime outbox), the workspace's ledger and balance, every stored file;
 * - the token with the scope is not refused, neither by the scope guard nor by the owner's role (a call that may
 *   change something gets a workspace of its own);
 * - the role still applies: a viewer's token with the scope is refused (403 WORKSPACE_FORBIDDEN) where the viewer's
 *   role does not allow the action.
 *
 * The refused calls and the reads of every operation go to one workspace seeded once: the refused calls change
 * nothing (which is checked around each operation's), so the next operation finds it as it was.
 *
 * It also checks that the scope table in docs/security.md says what domain/accessTokens.ts does.
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
import { TOKEN_SCOPE_OF_ACTION, TOKEN_SCOPES, type TokenScope } from '../../domain/accessTokens';
import { TASK_QUEUES, type TaskQueueName } from '../../domain/taskQueues';
import { roleAllows, WORKSPACE_ACTIONS, WORKSPACE_HEADER, WORKSPACE_ROLES, type WorkspaceAction } from '../../domain/workspaceRoles';
import { createAccessToken } from '../../services/accounts/accessTokens';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createStorage, storageConfigOf, type Storage } from '../../storage';
import { createTestUser } from '../support/accounts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';
import {
  createMatrixWorkspace,
  removeMatrixWorkspaces,
  snapshot,
  snapshotChanges,
  TINY_PNG,
  type MatrixResources,
  type MatrixRole,
  type MatrixUsers,
} from '../support/accessMatrixFixtures';
import { allowedAnswers, buildRequest, send, UnfillableError, VALUES, type MatrixAnswer, type MatrixOperation } from '../support/accessMatrixRequests';
import { uniqueTaskQueue, workflowTerminator } from '../support/temporal';
import { serve, type TestServer } from '../support/http';

const ROOT = path.resolve(__dirname, '..', '..');

const documentKnex = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL ?? 'postgres://invalid', pool: { min: 0, max: 1 } });
const documentRouters = buildRouters({ config: loadConfig(), knex: documentKnex, logger });
const document = buildOpenApiDocument(documentRouters) as unknown as { paths: Record<string, Record<string, Record<string, any>>> };
const operations: MatrixOperation[] = Object.entries(document.paths).flatMap(([p, item]) =>
  Object.entries(item).map(([method, operation]) => ({ method, path: p, operation })),
);
const secured = operations.filter((op) => Array.isArray(op.operation.security) && op.operation.security.length > 0);
const actionOf = (op: MatrixOperation): WorkspaceAction | 'self' | undefined => op.operation['x-workspace-action'];
const scopeOf = (op: MatrixOperation): TokenScope | null | undefined => op.operation['x-token-scope'];
const isAction = (value: unknown): value is WorkspaceAction => typeof value === 'string' && value in WORKSPACE_ACTIONS;
const label = (op: MatrixOperation) => `${op.method.toUpperCase()} ${op.path}`;
const reads = (op: MatrixOperation) => op.method === 'get' || op.method === 'head';

let db: ScratchDatabase;
let appKnex: Knex;
let storage: Storage;
let server: TestServer;
let users: MatrixUsers;
let config: AppConfig;
let taskQueues: Record<TaskQueueName, string>;
/** the owner's token of each scope, and one with every scope */
let ownerTokens: Record<TokenScope | 'all', string>;
/** the viewer's token of each scope */
let viewerTokens: Record<TokenScope, string>;

beforeAll(async () => {
  db = await createScratchDatabase('tokenmatrix', { migrated: true });
  await db.knex.migrate.latest();
  const base = loadConfig();
  const tag = randomBytes(4).toString('hex');
  config = {
    ...base,
    databaseUrl: db.url,
    storageDir: path.join(base.storageDir, `token-matrix-${tag}`),
    s3: { ...base.s3, bucketPrefix: `${base.s3.bucketPrefix}tm${tag}-` },
  };
  storage = createStorage(storageConfigOf(config));
  appKnex = connectDatabase(db.url, { min: 0, max: 10 });
  taskQueues = Object.fromEntries(Object.keys(TASK_QUEUES).map((name) => [name, uniqueTaskQueue(`tokens-${name}`)])) as Record<TaskQueueName, string>;
  server = await serve(createApp({ config, knex: appKnex, logger, taskQueues }));
  const roles: Array<MatrixRole | 'target'> = [...WORKSPACE_ROLES, 'nonMember', 'target'];
  const made = await Promise.all(roles.map((role) => createTestUser(server.baseUrl, { name: `Token matrix ${role}`, knex: db.knex })));
  users = Object.fromEntries(roles.map((role, i) => [role, made[i]])) as MatrixUsers;
  await db.knex('profiles').whereIn('id', made.map((u) => u.id)).update({ enhance_unlocked_at: db.knex.fn.now() });
  const tokenOf = async (userId: string, scopes: TokenScope[]) => (await createAccessToken(db.knex, userId, { name: scopes.join(' '), scopes })).token;
  ownerTokens = { all: await tokenOf(users.owner.id, [...TOKEN_SCOPES]) } as Record<TokenScope | 'all', string>;
  viewerTokens = {} as Record<TokenScope, string>;
  for (const scope of TOKEN_SCOPES) {
    ownerTokens[scope] = await tokenOf(users.owner.id, [scope]);
    viewerTokens[scope] = await tokenOf(users.viewer.id, [scope]);
  }
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

/** The rule of api/tokenScopes.ts, written out again from the issue's words, for the document to be checked against. */
function expectedScope(op: MatrixOperation): TokenScope | null {
  const action = actionOf(op);
  if (action === undefined || op.operation['x-session-only'] === true) return null;
  if (action === 'self') return reads(op) && !/^\/api\/account\//.test(op.path) ? 'read' : null;
  if (!isAction(action)) return null;
  if (action === 'billing') return reads(op) ? 'billing:read' : null;
  return TOKEN_SCOPE_OF_ACTION[action];
}

describe('the document', () => {
  it('names the token scope of every operation that needs a session, as the rules say', () => {
    const wrong = secured
      .filter((op) => scopeOf(op) !== (op.path.startsWith('/api/admin/') ? null : expectedScope(op)))
      .map((op) => `${label(op)}: ${String(scopeOf(op))}, expected ${String(expectedScope(op))}`);
    expect(wrong).toEqual([]);
    expect(secured.filter((op) => scopeOf(op) === 'read').length).toBeGreaterThan(10);
    for (const scope of TOKEN_SCOPES) expect({ scope, operations: secured.some((op) => scopeOf(op) === scope) }).toEqual({ scope, operations: true });
  });

  it("docs/security.md's scope table is domain/accessTokens.ts's TOKEN_SCOPE_OF_ACTION", () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8');
    const start = doc.indexOf('### Token scopes');
    expect(start).toBeGreaterThan(0);
    const rest = doc.slice(start);
    const section = rest.slice(0, rest.indexOf('\n## ') === -1 ? undefined : rest.indexOf('\n## '));
    const rows = [...section.matchAll(/^\|\s*`([\w:]+)`\s*\|\s*([^|]+)\|/gm)].map((m) => [m[1], [...m[2].matchAll(/`(\w+)`/g)].map((a) => a[1]).sort()] as const);
    const expected = TOKEN_SCOPES.map((scope) => [scope, Object.entries(TOKEN_SCOPE_OF_ACTION).filter(([, s]) => s === scope).map(([a]) => a).sort()] as const);
    expect(rows).toEqual(expected);
  });
});

const ALLOWED_WAIT_MS = 4_000;

const terminator = workflowTerminator('token matrix: done');
async function endStartedWorkflows(): Promise<void> {
  await terminator.terminateRunning(Object.values(taskQueues));
}

const localDirs = () => ['.tus-uploads', ...(config.storageBackend === 'local' ? ['.incoming'] : [])].map((dir) => path.join(path.resolve(config.storageDir), dir));

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

/**
 * The session matrix's request; for an operation no token may call, a path parameter that names nothing of a
 * workspace (an invitation's token) gets a value that names nothing: the guard refuses before it is read.
 */
function requestFor(op: MatrixOperation, resources: MatrixResources) {
  try {
    return buildRequest(op, resources);
  } catch (err) {
    if (!(err instanceof UnfillableError) || scopeOf(op) !== null) throw err;
    const filled = op.path.replace(/\{(\w+)\}/g, (whole, name: string) => (lookup(op.path, name) ? whole : 'unfilled'));
    return buildRequest({ ...op, path: filled, operation: { ...op.operation, parameters: (op.operation.parameters ?? []).filter((p: { in: string; name: string }) => p.in !== 'path' || lookup(op.path, p.name)) } }, resources);
  }
}

/** Whether VALUES fills `name` on `path` (a `<prefix>#<name>` entry only on paths under its prefix). */
const lookup = (path: string, name: string) => Object.keys(VALUES).some((key) => key === name || (key.endsWith(`#${name}`) && path.startsWith(key.slice(0, key.indexOf('#')))));

function answerText(a: MatrixAnswer): string {
  return `${a.status}${a.code ? ` ${a.code}` : ''}${a.error ? ` "${a.error.slice(0, 120)}"` : ''}`;
}

/** A scope refusal as expected: 403 with the code (a HEAD answer has no body to carry it) and the scope named. */
function isScopeRefusal(a: MatrixAnswer, scope: TokenScope | null, method: string): boolean {
  if (a.status !== 403) return false;
  if (method === 'head') return true;
  return scope === null ? a.code === 'TOKEN_NOT_ALLOWED' : a.code === 'TOKEN_SCOPE_MISSING' && a.error === `This token lacks the "${scope}" scope`;
}

const isTokenRefusal = (a: MatrixAnswer) => a.status === 401 || (a.status === 403 && (a.code === 'TOKEN_SCOPE_MISSING' || a.code === 'TOKEN_NOT_ALLOWED'));
const isWorkspaceRefusal = (a: MatrixAnswer) => (a.status === 403 && a.code === 'WORKSPACE_FORBIDDEN') || (a.status === 404 && a.code === 'WORKSPACE_NOT_FOUND');

describe('the token matrix', () => {
  it('walks every operation that needs a session', () => {
    expect(secured.length).toBeGreaterThan(50);
  });

  test.each(secured.map((op) => [label(op), op] as const))('%s', async (_name, op) => {
    const scope = scopeOf(op) ?? null;
    const action = actionOf(op);
    const problems: string[] = [];
    if (kept.length === 0) kept.push(await seed());
    const resources = kept[0];

    // refused: every owner's token without the scope (and, where no token may call it, the one with every scope)
    const refusedWith: Array<TokenScope | 'all'> = [...TOKEN_SCOPES.filter((s) => s !== scope), ...(scope === null ? (['all'] as const) : [])];
    const before = await snapshot(db.knex, storage, resources.workspaceId, localDirs());
    const refusals = await Promise.all(refusedWith.map((which) => send(server.baseUrl, requestFor(op, resources), ownerTokens[which], resources.workspaceId)));
    for (const [i, which] of refusedWith.entries()) {
      const answer = refusals[i];
      if (!isScopeRefusal(answer, scope, op.method)) problems.push(`owner's ${which} token: expected 403 ${scope === null ? 'TOKEN_NOT_ALLOWED' : `TOKEN_SCOPE_MISSING naming "${scope}"`}, got ${answerText(answer)}`);
    }
    const changes = snapshotChanges(before, await snapshot(db.knex, storage, resources.workspaceId, localDirs()));
    if (changes.length) problems.push(`refused token calls changed ${changes.join('; ')}`);

    if (scope !== null) {
      // allowed: the owner's token with the scope (a call that may change something in a workspace of its own);
      // the role still decides: the viewer's token with the scope. Both at once: the owner's call may wait for its
      // workflow (nobody runs it), which is ended for it (ALLOWED_WAIT_MS at most)
      const own = reads(op) ? resources : await seed();
      const viewerRefused = isAction(action) && !roleAllows('viewer', action);
      const [answer, viewerCall] = (await allowedAnswers<MatrixAnswer | null>([
        send(server.baseUrl, requestFor(op, own), ownerTokens[scope], own.workspaceId, ALLOWED_WAIT_MS),
        viewerRefused ? send(server.baseUrl, requestFor(op, resources), viewerTokens[scope], resources.workspaceId, ALLOWED_WAIT_MS) : Promise.resolve(null),
      ], endStartedWorkflows)) as [MatrixAnswer, MatrixAnswer | null];
      if (isTokenRefusal(answer) || isWorkspaceRefusal(answer)) problems.push(`owner's ${scope} token: allowed, but got ${answerText(answer)}`);
      if (viewerCall) {
        const forbidden = viewerCall.status === 403 && (viewerCall.code === 'WORKSPACE_FORBIDDEN' || op.method === 'head');
        if (!forbidden) problems.push(`viewer's ${scope} token: expected 403 WORKSPACE_FORBIDDEN (the role), got ${answerText(viewerCall)}`);
      }
    }
    await endStartedWorkflows();
    await removeMatrixWorkspaces(db.knex, storage, kept);
    expect(problems).toEqual([]);
  }, 120_000);
});
