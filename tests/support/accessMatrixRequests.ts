/**
 * Requests for the access-matrix test, built from the OpenAPI document: path parameters, required query parameters
 * and headers, and a body from the operation's schema, with every value that names something taken from the
 * workspace's resources by its name (VALUES). A name the table cannot fill fails the test with a message saying
 * where to add it: a route the matrix cannot call is a route nobody classified.
 */
import { randomUUID } from 'node:crypto';
import { CREDIT_PACKAGES, VIDEO_EFFECTS } from '../../domain/constants';
import { ENHANCE_MODEL_IDS } from '../../domain/enhanceRenders';
import { WORKSPACE_HEADER } from '../../domain/workspaceRoles';
import { TINY_PNG, type MatrixResources } from './accessMatrixFixtures';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Schema = Record<string, any>;

export interface MatrixOperation {
  method: string;
  /** OpenAPI form: /api/projects/{id} */
  path: string;
  operation: Schema;
}

/** A value for a parameter or body field: `ref` when it names one of the workspace's resources. */
interface Filled {
  value: unknown;
  ref: boolean;
}

type Filler = (r: MatrixResources) => Filled;
const ref = (pick: (r: MatrixResources) => unknown): Filler => (r) => ({ value: pick(r), ref: true });
const constant = (value: unknown): Filler => () => ({ value, ref: false });

/**
 * Values by name, for path and query parameters, headers and body fields. `<path prefix>#<name>` entries win over
 * the plain name for paths that start with the prefix (the longest prefix first).
 */
export const VALUES: Record<string, Filler> = {
  // path parameters
  id: ref((r) => r.projectId),
  '/api/workspaces/{id}#id': ref((r) => r.workspaceId),
  '/api/content/{id}#id': ref((r) => r.clipId),
  '/api/uploads/tus/{id}#id': ref((r) => r.uploadId),
  '/api/jobs/{kind}/{id}#id': ref((r) => r.clipJobId),
  '/api/admin/users/{id}#id': ref((r) => r.targetUserId),
  workspaceId: ref((r) => r.workspaceId),
  videoId: ref((r) => r.compiledVideoId),
  itemId: ref((r) => r.renderId),
  jobId: ref((r) => r.clipJobId),
  '/api/ai-image-simple#jobId': ref((r) => r.imageEditJobId),
  '/api/video/assemble#jobId': ref((r) => r.assemblyJobId),
  '/api/enhance-set#jobId': ref((r) => r.draftJobId),
  kind: constant('clip'),
  sessionId: ref((r) => r.purchaseSessionId),
  userId: ref((r) => r.targetUserId),
  invitationId: ref((r) => r.invitationId),
  exportId: ref((r) => r.exportId),
  endpointId: ref((r) => r.webhookEndpointId),
  deliveryId: ref((r) => r.webhookDeliveryId),
  threadId: ref((r) => r.commentThreadId),
  commentId: ref((r) => r.commentId),
  linkId: ref((r) => r.reviewLinkId),
  trackId: ref((r) => r.musicTrackId),
  // body and query fields
  projectId: ref((r) => r.projectId),
  approvalId: ref((r) => r.approvalId),
  draftId: ref((r) => r.draftId),
  imageId: ref((r) => r.imageId),
  '/api/enhance-set#imageId': ref((r) => r.draftImageId),
  renderId: ref((r) => r.renderId),
  clipId: ref((r) => r.clipId),
  ids: ref((r) => [r.projectId]),
  clipIds: ref((r) => [r.clipId]),
  clipOrder: ref((r) => [r.clipId]),
  contentItems: ref((r) => [{ id: r.clipId, type: 'clip' }]),
  imageIds: ref((r) => [r.draftImageId]),
  selected_clips: ref((r) => [r.clipId]),
  baseImage: ref((r) => r.renderUrl),
  imageUrl: ref((r) => r.renderUrl),
  versionUrl: ref((r) => r.draftImageUrl),
  source_url: ref((r) => r.renderUrl),
  name: constant('Matrix name'),
  email: constant('matrix-invitee@example.test'),
  role: constant('viewer'),
  prompt: constant('warmer light'),
  message: constant('Make it calm'),
  movement: constant(VIDEO_EFFECTS[0]),
  cameraMovement: constant(VIDEO_EFFECTS[0]),
  fileName: constant('matrix.png'),
  packageId: constant(CREDIT_PACKAGES[0].id),
  modelId: constant(ENHANCE_MODEL_IDS[0]),
  code: constant('NOT-THE-CODE'),
  confirmEmail: constant('nobody@example.test'),
  reason: constant('matrix'),
  amount: constant(1),
  approvalPolicy: constant({ kind: 'any' }),
  '/api/approvals/request-changes#request': constant('Make the sky warmer'),
  // review links (the guest routes are public: tests/workspaces/accessMatrix.test.ts checks them by link)
  '/api/review-links#title': constant('Matrix review'),
  '/api/review-links#token': ref((r) => r.reviewLinkToken),
  '/api/review-links#to': constant(['matrix-client@example.test']),
  '/api/review-links#itemIds': ref((r) => [r.approvalId]),
  expiresInDays: constant(14),
  // headers
  'tus-resumable': constant('1.0.0'),
  'upload-length': constant(String(TINY_PNG.length)),
  'upload-offset': constant('0'),
  'idempotency-key': () => ({ value: `matrix-${randomUUID()}`, ref: false }),
  'upload-metadata': ref((r) => `filename ${b64('matrix.png')},filetype ${b64('image/png')},projectId ${b64(r.projectId)}`),
};

function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

export class UnfillableError extends Error {}

function lookup(path: string, name: string): Filler | undefined {
  const prefixed = Object.keys(VALUES)
    .filter((key) => key.includes('#') && key.endsWith(`#${name}`) && path.startsWith(key.slice(0, key.indexOf('#'))))
    .sort((a, b) => b.length - a.length)[0];
  return VALUES[prefixed ?? name];
}

/** A value the schema accepts, from VALUES by name first; null when no name fits and the schema gives no default. */
function valueFor(path: string, name: string, schema: Schema, resources: MatrixResources, refs: { any: boolean }): unknown {
  const filler = lookup(path, name);
  if (filler) {
    const filled = filler(resources);
    if (filled.ref) refs.any = true;
    return filled.value;
  }
  return fromSchema(path, name, schema, resources, refs);
}

function fromSchema(path: string, name: string, schema: Schema, resources: MatrixResources, refs: { any: boolean }): unknown {
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const anyOf: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  if (anyOf) return fromSchema(path, name, anyOf.find((s) => s.type !== 'null') ?? anyOf[0], resources, refs);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return objectFrom(path, schema, resources, refs);
    case 'array': {
      const items = schema.items ?? {};
      return Array.from({ length: schema.minItems ?? 0 }, () => fromSchema(path, name, items, resources, refs));
    }
    case 'string':
      if (schema.format === 'uuid') throw new UnfillableError(`no value for "${name}" (a uuid)`);
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/**
 * Optional body fields filled all the same: they name the project or items a call acts on (so the access check goes
 * through them) or make the body one the handler gets past its own checks with. Never `userId`: a body naming
 * another user is refused before any workspace is looked at.
 */
const OPTIONAL_FILLED = new Set(['projectId', 'renderId', 'clipIds', 'clipOrder', 'contentItems', 'prompt']);

function objectFrom(path: string, schema: Schema, resources: MatrixResources, refs: { any: boolean }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const names = new Set<string>(schema.required ?? []);
  for (const name of Object.keys(properties)) if (OPTIONAL_FILLED.has(name)) names.add(name);
  for (const name of names) out[name] = valueFor(path, name, properties[name] ?? {}, resources, refs);
  return out;
}

export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
  /** whether the request names one of the workspace's resources (a path, query or body value) */
  namesResource: boolean;
}

/**
 * The request for `op` against `resources`: every path parameter (UnfillableError when VALUES has no entry for
 * its name), required query parameters and headers, the tus headers, and a body from the schema.
 */
export function buildRequest(op: MatrixOperation, resources: MatrixResources): BuiltRequest {
  const refs = { any: false };
  const params = (op.operation.parameters ?? []) as Schema[];
  let url = op.path;
  for (const p of params.filter((p) => p.in === 'path')) {
    const enumerated = Array.isArray(p.schema?.enum) ? constant(p.schema.enum[0]) : undefined;
    const filler = lookup(op.path, p.name) ?? enumerated;
    if (!filler) {
      throw new UnfillableError(
        `${op.method.toUpperCase()} ${op.path}: no value for path parameter "${p.name}". Add it to VALUES in tests/support/accessMatrixRequests.ts (which resource of the workspace it names)`,
      );
    }
    const filled = filler(resources);
    if (filled.ref) refs.any = true;
    url = url.replace(`{${p.name}}`, encodeURIComponent(String(filled.value)));
  }
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const p of params.filter((p) => p.in === 'query' || p.in === 'header')) {
    const known = lookup(op.path, p.name);
    if (!p.required && !(p.in === 'header' && known)) continue;
    let value: unknown;
    try {
      value = valueFor(op.path, p.name, p.schema ?? {}, resources, refs);
    } catch (err) {
      if (err instanceof UnfillableError) throw new UnfillableError(`${op.method.toUpperCase()} ${op.path}: ${err.message}. Add it to VALUES in tests/support/accessMatrixRequests.ts`);
      throw err;
    }
    if (p.in === 'query') query.set(p.name, String(value));
    else headers[p.name] = String(value);
  }
  const search = query.toString();
  const built: BuiltRequest = { method: op.method.toUpperCase(), url: search ? `${url}?${search}` : url, headers, namesResource: false };
  const content = op.operation.requestBody?.content as Record<string, { schema: Schema }> | undefined;
  if (content) {
    const [type, { schema }] = Object.entries(content)[0];
    if (type === 'application/json') {
      built.headers['content-type'] = 'application/json';
      built.body = JSON.stringify(objectFrom(op.path, schema, resources, refs));
    } else if (type === 'multipart/form-data') {
      const form = new FormData();
      for (const [name, value] of Object.entries(objectFrom(op.path, { ...schema, required: (schema.required ?? []).filter((n: string) => schema.properties?.[n]?.format !== 'binary') }, resources, refs))) {
        form.set(name, String(value));
      }
      for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        if (prop.format === 'binary') form.set(name, new Blob([TINY_PNG], { type: 'image/png' }), 'matrix.png');
      }
      built.body = form;
    } else {
      built.headers['content-type'] = type;
      built.body = type.includes('octet-stream') && built.method === 'PATCH' ? TINY_PNG : Buffer.alloc(0);
    }
  }
  built.namesResource = refs.any;
  return built;
}

export interface MatrixAnswer {
  status: number;
  code: string | null;
  error: string | null;
  contentType: string;
}

/**
 * Sends the request as `token` in `workspaceId` (no header when null); an event stream is closed once it answers.
 * A call still running after `waitMs` (one that waits for its workflow) answers status 0: the access check, which
 * comes first and reads one row, is behind it.
 */
export async function send(baseUrl: string, req: BuiltRequest, token: string, workspaceId: string | null, waitMs = 20_000): Promise<MatrixAnswer> {
  const headers: Record<string, string> = { ...req.headers, authorization: `Bearer ${token}` };
  if (workspaceId) headers[WORKSPACE_HEADER] = workspaceId;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, waitMs);
  try {
    const res = await fetch(`${baseUrl}${req.url}`, { method: req.method, headers, body: req.body as RequestInit['body'], signal: controller.signal, redirect: 'manual' });
    const contentType = res.headers.get('content-type') ?? '';
    if (contentType.startsWith('text/event-stream')) {
      controller.abort();
      return { status: res.status, code: null, error: null, contentType };
    }
    const text = req.method === 'HEAD' ? '' : await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // files and pages are not JSON
    }
    return { status: res.status, code: parsed?.code ?? null, error: parsed?.error ?? null, contentType };
  } catch (err) {
    if (timedOut) return { status: 0, code: null, error: `no answer within ${waitMs} ms`, contentType: '' };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The answers to calls of roles an action allows. A call that waits for the workflow it started (nobody runs it in
 * the matrix tests) answers once that workflow is ended: `endStartedWorkflows` runs every 200 ms while calls are
 * still waiting; a call is left after its own wait at most (status 0).
 */
export async function allowedAnswers<T>(calls: Array<Promise<T>>, endStartedWorkflows: () => Promise<void>): Promise<T[]> {
  let done = false;
  const all = Promise.all(calls).finally(() => (done = true));
  const ending = (async () => {
    while (!done) {
      await Promise.race([all.catch(() => undefined), new Promise((r) => setTimeout(r, 200))]);
      if (!done) await endStartedWorkflows();
    }
  })();
  const answers = await all;
  await ending;
  return answers;
}
