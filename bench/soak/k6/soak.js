/**
 * The soak's virtual users (k6; run by bench/soak.ts, issue 28 item 2). Each iteration is one thing a real user does,
 * picked by weight (ACTIONS below): browse projects and the library page by page, read credits and transactions, work
 * through the approval queue (approve most, reject some), look at the activity list, upload a render (some through
 * tus, resumed after a HEAD as a browser does after a dropped connection), edit an image, start a clip, assemble
 * approved clips, open Enhance Renders, sign in again or sign up. Event streams (SSE) are watched by bench/soak.ts
 * itself (k6 has no streaming reader). The users were seeded by bench/soak.ts (SOAK_USERS_FILE) with credits granted
 * through the admin endpoint.
 *
 * Calls are made as the front end makes them (frontend/src/api/*.ts): a session token per user, reads retried by ky's
 * defaults (2 retries on 408/413/429/500/502/503/504 or a network failure, 0.3 s then 0.6 s apart), starts and
 * decisions never resent. Every request attempt is written as one JSON line on the console (--console-output):
 *   { t: start (epoch ms), d: ms, g: route group, r: route, m: method, s: status (0: no answer), a: attempt,
 *     ok: whether the outcome was one this call expects, c: the API's error code, job?: { kind, id } admitted }
 * bench/soak/report.ts aggregates them.
 *
 * Env: SOAK_BASE_URL, SOAK_USERS_FILE, SOAK_IMAGES_FILE (a JSON list of JPEG paths), SOAK_RATE (iterations/s),
 * SOAK_VUS, SOAK_DURATION (k6 duration, e.g. 10m), SOAK_ACCESS_CODE (Enhance Renders).
 */
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import encoding from 'k6/encoding';

const BASE = __ENV.SOAK_BASE_URL;
const USERS = JSON.parse(open(__ENV.SOAK_USERS_FILE));
const IMAGES = JSON.parse(open(__ENV.SOAK_IMAGES_FILE)).map((file) => ({ name: file.split('/').pop(), data: open(file, 'b') }));
const RATE = Number(__ENV.SOAK_RATE || 8);
const VUS = Number(__ENV.SOAK_VUS || 100);

export const options = {
  scenarios: {
    users: {
      executor: 'constant-arrival-rate',
      // k6 takes a whole number of iterations per time unit: per minute keeps fractional rates per second
      rate: Math.max(1, Math.round(RATE * 60)),
      timeUnit: '1m',
      duration: __ENV.SOAK_DURATION || '10m',
      preAllocatedVUs: Math.min(VUS, Math.max(10, RATE * 4)),
      maxVUs: VUS,
      gracefulStop: '90s',
    },
  },
  // the report is bench/soak/report.ts's; k6's own summary only adds dropped iterations and VU counts
  summaryTrendStats: ['med', 'p(95)', 'p(99)', 'max'],
  discardResponseBodies: false,
  noCookiesReset: true,
};

/** ky's default retry: these statuses (and no answer at all) for GET, PUT, HEAD, DELETE; 0.3 s doubling. */
const RETRY_STATUSES = [0, 408, 413, 429, 500, 502, 503, 504];
const IDEMPOTENT = ['GET', 'PUT', 'HEAD', 'DELETE'];

/** Per VU: its user, session token, and what it learned of its projects. */
const state = { user: null, token: null, renders: {} };

function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}

function chance(p) {
  return Math.random() < p;
}

function think(min = 0.2, max = 1.0) {
  sleep(min + Math.random() * (max - min));
}

function errorCode(res) {
  if (res.status < 400) return undefined;
  try {
    const body = JSON.parse(res.body);
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One call as the front end makes it. `expect`: refusals this call may meet in normal use (the pending-approvals
 * limit, the rejection cooldown, an item another tab decided first); anything else outside 2xx counts as an error.
 */
function call(method, route, path, { group, body, headers = {}, expect = [], expectCodes = [], retries, timeout = '60s', job, auth = true } = {}) {
  const maxRetries = retries ?? (IDEMPOTENT.includes(method) ? 2 : 0);
  const allHeaders = { ...headers };
  if (auth && state.token) allHeaders.Authorization = `Bearer ${state.token}`;
  if (body !== undefined && typeof body === 'string' && !allHeaders['Content-Type']) allHeaders['Content-Type'] = 'application/json';
  for (let attempt = 1; ; attempt++) {
    const t = Date.now();
    const res = http.request(method, `${BASE}${path}`, body === undefined ? null : body, { headers: allHeaders, tags: { name: route, group }, timeout, responseCallback: http.expectedStatuses({ min: 100, max: 599 }) });
    const d = Date.now() - t;
    const s = res.status;
    const c = errorCode(res);
    const ok = (s >= 200 && s < 300) || expect.includes(s) || (c !== undefined && expectCodes.includes(c));
    const line = { t, d, g: group, r: route, m: method, s, a: attempt, ok, vu: exec.vu.idInTest };
    if (c) line.c = c;
    if (s === 0 && res.error) line.e = res.error.slice(0, 120);
    if (job && s >= 200 && s < 300) {
      const id = job(res);
      if (id) line.job = { kind: job.kind, id };
    }
    console.log(JSON.stringify(line));
    if (!ok && attempt <= maxRetries && RETRY_STATUSES.includes(s)) {
      sleep(0.3 * 2 ** (attempt - 1));
      continue;
    }
    return res;
  }
}

function json(res) {
  try {
    return JSON.parse(res.body);
  } catch {
    return null;
  }
}

function jobId(kind, read) {
  const f = (res) => {
    const body = json(res);
    return body ? read(body) : null;
  };
  f.kind = kind;
  return f;
}

function signIn(user) {
  const res = call('POST', '/api/auth/signin', '/api/auth/signin', { group: 'auth', body: JSON.stringify({ email: user.email, password: user.password }), auth: false });
  const body = json(res);
  if (res.status === 200 && body) state.token = body.token;
}

function ensureSession() {
  if (!state.user) state.user = USERS[(exec.vu.idInTest - 1) % USERS.length];
  if (!state.token) signIn(state.user);
  return state.token !== null;
}

function someProject() {
  return pick(state.user.projects);
}

function rendersOf(projectId) {
  return state.renders[projectId] ?? state.user.renders.filter((r) => r.projectId === projectId);
}

/** Projects list, one project, the library's first page and sometimes the next (50 items a page, as the app asks). */
function browse() {
  call('GET', '/api/projects/list', '/api/projects/list', { group: 'projects' });
  think();
  const project = someProject();
  call('GET', '/api/projects/:id', `/api/projects/${project.id}`, { group: 'projects' });
  const first = call('GET', '/api/projects/:id/content', `/api/projects/${project.id}/content?limit=50`, { group: 'library' });
  const page = json(first);
  if (page && Array.isArray(page.content)) {
    const renders = page.content.filter((item) => item.type === 'render').map((item) => ({ projectId: project.id, id: item.data.id, fileUrl: item.data.file_url }));
    if (renders.length) state.renders[project.id] = renders;
    if (page.nextCursor && chance(0.5)) {
      think();
      call('GET', '/api/projects/:id/content', `/api/projects/${project.id}/content?limit=50&cursor=${encodeURIComponent(page.nextCursor)}`, { group: 'library' });
    }
  }
}

function credits() {
  call('GET', '/api/credits/summary', '/api/credits/summary', { group: 'credits' });
  think();
  call('GET', '/api/credits/transactions', `/api/credits/transactions?page=${chance(0.8) ? 1 : 2}`, { group: 'credits' });
  if (chance(0.3)) call('GET', '/api/credits/can-create', `/api/credits/can-create?type=${pick(['image', 'clip'])}`, { group: 'credits' });
}

/** The approval queue: stats, list, then a decision on one item (three in four approved). */
function approvals() {
  call('GET', '/api/approvals/stats', '/api/approvals/stats', { group: 'approvals' });
  const list = json(call('GET', '/api/approvals/list', '/api/approvals/list', { group: 'approvals' }));
  const items = list && Array.isArray(list.data) ? list.data : [];
  if (!items.length) return;
  think(0.5, 2);
  const item = pick(items);
  const decision = chance(0.75) ? 'approve' : 'reject';
  // another VU of the same user may have decided it first (404/409): the app shows that and re-reads; rejecting
  // needs a past purchase (the seeded users bought a package; one whose checkout failed is told so)
  call('POST', `/api/approvals/${decision}`, `/api/approvals/${decision}`, { group: 'approvals', body: JSON.stringify({ approvalId: item.id }), expect: [404, 409], expectCodes: ['REJECTION_REQUIRES_PURCHASE'] });
}

function activity() {
  call('GET', '/api/jobs', '/api/jobs', { group: 'jobs' });
}

function upload() {
  const project = someProject();
  const image = pick(IMAGES);
  const res = call('POST', '/api/upload/renders', '/api/upload/renders', {
    group: 'uploads',
    body: { projectId: project.id, file: http.file(image.data, image.name, 'image/jpeg') },
    timeout: '120s',
  });
  const body = json(res);
  if (res.status === 200 && body && body.render) {
    const list = rendersOf(project.id).slice();
    list.push({ projectId: project.id, id: body.render.data.id, fileUrl: body.render.data.file_url });
    state.renders[project.id] = list;
  }
}

/** A tus upload in two halves with a HEAD between, as tus-js-client resumes after a dropped connection. */
function resumableUpload() {
  const project = someProject();
  const image = pick(IMAGES);
  const size = image.data.byteLength;
  const meta = [`filename ${encoding.b64encode(`resumed-${image.name}`)}`, `filetype ${encoding.b64encode('image/jpeg')}`, `projectId ${encoding.b64encode(project.id)}`].join(',');
  const tus = { 'Tus-Resumable': '1.0.0' };
  const created = call('POST', '/api/uploads/tus', '/api/uploads/tus', { group: 'tus', headers: { ...tus, 'Upload-Length': String(size), 'Upload-Metadata': meta } });
  const location = created.headers.Location || created.headers.location;
  if (created.status !== 201 || !location) return;
  const path = location.startsWith('http') ? location.slice(location.indexOf('/api/')) : location;
  const half = Math.floor(size / 2);
  const octets = { ...tus, 'Content-Type': 'application/offset+octet-stream' };
  call('PATCH', '/api/uploads/tus/:id', path, { group: 'tus', headers: { ...octets, 'Upload-Offset': '0' }, body: image.data.slice(0, half), retries: 0 });
  think(0.2, 0.6);
  const head = call('HEAD', '/api/uploads/tus/:id', path, { group: 'tus', headers: tus });
  const offset = Number(head.headers['Upload-Offset'] || head.headers['upload-offset'] || 0);
  call('PATCH', '/api/uploads/tus/:id', path, { group: 'tus', headers: { ...octets, 'Upload-Offset': String(offset) }, body: image.data.slice(offset), retries: 0, timeout: '120s' });
}

/** Generation refusals a user meets in normal use: pending-approvals limit or a clip running (409), rejection cooldown (429). */
const GENERATION_REFUSALS = [409, 429];

/** An image edit of one of the project's renders: the app waits for it (up to 2.5 min), then polls when told 202. */
function imageEdit() {
  const project = someProject();
  const renders = rendersOf(project.id);
  if (!renders.length) return browse();
  const render = pick(renders);
  const prompt = pick(['Warm evening light, people on the terrace', 'Snow on the roofs, winter morning', 'Lush planting along the facade', 'Golden hour, long shadows']);
  const res = call('POST', '/api/ai-image-simple', '/api/ai-image-simple', {
    group: 'image-edit',
    timeout: '150s',
    expect: GENERATION_REFUSALS,
    job: jobId('image-edit', (b) => b.metadata && b.metadata.jobId),
    body: JSON.stringify({
      workflow: 'ENHANCED_IMAGE_EDITING',
      context: { projectId: project.id, userId: state.user.id, userIntent: prompt, platform: 'web' },
      parameters: { prompt, baseImage: render.id, validateRefinement: true, format: pick(['original', 'landscape', 'square']), quality: 'standard', upscaleScale: 2 },
    }),
  });
  const body = json(res);
  if (res.status === 202 && body && body.metadata) {
    for (let i = 0; i < 10; i++) {
      sleep(2);
      const status = json(call('GET', '/api/ai-image-simple/status/:jobId', `/api/ai-image-simple/status/${body.metadata.jobId}`, { group: 'image-edit' }));
      if (!status || !status.job || ['completed', 'failed'].includes(status.job.status)) break;
    }
  }
}

const EFFECTS = ['Bring to Life', 'Walk Through', 'Day to Night', 'Drone Shot', 'Zoom In', 'Pan Left', 'Pan Right'];

/** A clip from a render; the user watches its status for a few seconds, then moves on (the stream tells the rest). */
function clip() {
  const project = someProject();
  const renders = rendersOf(project.id);
  if (!renders.length) return browse();
  const render = pick(renders);
  const res = call('POST', '/api/video-generation/start', '/api/video-generation/start', {
    group: 'clips',
    expect: GENERATION_REFUSALS,
    job: jobId('clip', (b) => b.jobId),
    body: JSON.stringify({
      options: { imageUrl: render.fileUrl, movement: pick(EFFECTS), originalPrompt: 'A slow move across the building', duration: 5, aspectRatio: '16:9', platform: 'YouTube' },
      context: { projectId: project.id, userId: state.user.id, renderId: render.id, imageId: null, isTemporaryImage: false },
    }),
  });
  const body = json(res);
  if (res.status !== 200 || !body || !body.jobId) return;
  for (let i = 0; i < 3; i++) {
    sleep(2);
    const status = json(call('GET', '/api/video-generation/status/:jobId', `/api/video-generation/status/${body.jobId}`, { group: 'clips' }));
    if (!status || !status.job || !['pending', 'processing'].includes(status.job.status)) break;
  }
}

/** Approved landscape clips of one project, dry run, then the assembly; its status is read twice. */
function assemble() {
  const list = json(call('GET', '/api/video-assembly/clips', '/api/video-assembly/clips?orientation=landscape', { group: 'assembly' }));
  const clips = list && Array.isArray(list.clips) ? list.clips : [];
  const byProject = {};
  for (const c of clips) (byProject[c.project_id] = byProject[c.project_id] || []).push(c);
  const candidates = Object.values(byProject).filter((cs) => cs.length >= 2);
  if (!candidates.length) return;
  const chosen = pick(candidates).slice(0, 3);
  const projectId = chosen[0].project_id;
  think();
  call('POST', '/api/video-assembly/dry-run', '/api/video-assembly/dry-run', { group: 'assembly', body: JSON.stringify({ projectId, clipIds: chosen.map((c) => c.id), aspectRatio: '16:9' }) });
  const res = call('POST', '/api/video/assemble', '/api/video/assemble', {
    group: 'assembly',
    expect: GENERATION_REFUSALS,
    job: jobId('assembly', (b) => b.jobId),
    timeout: '60s',
    body: JSON.stringify({
      projectId,
      platform: 'youtube',
      contentItems: chosen.map((c) => ({ id: c.id, type: 'clip', file_url: c.file_url, file_name: c.file_name })),
      clipOrder: chosen.map((c) => c.id),
    }),
  });
  const body = json(res);
  if (res.status !== 200 || !body || !body.jobId) return;
  for (let i = 0; i < 2; i++) {
    sleep(2);
    call('GET', '/api/video/assemble', `/api/video/assemble?jobId=${body.jobId}`, { group: 'assembly' });
  }
}

/** Enhance Renders: access (the code once per user), the drafts list, now and then a new draft. */
function enhance() {
  const access = json(call('GET', '/api/enhance-set/access', '/api/enhance-set/access', { group: 'enhance' }));
  if (access && access.configured && !access.unlocked && __ENV.SOAK_ACCESS_CODE) {
    call('POST', '/api/enhance-set/access/unlock', '/api/enhance-set/access/unlock', { group: 'enhance', body: JSON.stringify({ code: __ENV.SOAK_ACCESS_CODE }) });
  }
  const list = json(call('GET', '/api/enhance-set/drafts/list', '/api/enhance-set/drafts/list', { group: 'enhance', expect: access && access.configured ? [] : [403] }));
  const drafts = list && Array.isArray(list.drafts) ? list.drafts : [];
  if (drafts.length < 3 && chance(0.3)) {
    call('POST', '/api/enhance-set/drafts/create', '/api/enhance-set/drafts/create', { group: 'enhance', body: JSON.stringify({ name: `Soak draft ${Date.now() % 100000}` }) });
  }
}

function session() {
  call('GET', '/api/auth/session', '/api/auth/session', { group: 'auth' });
  call('GET', '/api/profile', '/api/profile', { group: 'profile' });
}

/** A new visitor signs up, creates a project and looks at it; the VU then goes back to its own user. */
function signUp() {
  const email = `soak-new-${exec.vu.idInTest}-${exec.scenario.iterationInTest}-${Date.now()}@soak.test`;
  const res = call('POST', '/api/auth/signup', '/api/auth/signup', { group: 'auth', auth: false, body: JSON.stringify({ name: 'Soak Newcomer', email, password: 'soak-password-1' }) });
  const body = json(res);
  if (res.status !== 201 || !body) return;
  const own = state.token;
  state.token = body.token;
  const created = json(call('POST', '/api/projects', '/api/projects', { group: 'projects', body: JSON.stringify({ name: 'First project' }) }));
  call('GET', '/api/projects/list', '/api/projects/list', { group: 'projects' });
  if (created && created.project) call('GET', '/api/projects/:id/content', `/api/projects/${created.project.id}/content?limit=50`, { group: 'library' });
  call('GET', '/api/credits/summary', '/api/credits/summary', { group: 'credits' });
  state.token = own;
}

/** What real users do, in proportion (weights out of 100). */
export const ACTIONS = [
  [browse, 28],
  [credits, 12],
  [approvals, 14],
  [activity, 6],
  [session, 5],
  [upload, 7],
  [resumableUpload, 2],
  [imageEdit, 9],
  [clip, 5],
  [assemble, 2],
  [enhance, 5],
  [() => signIn(state.user), 3],
  [signUp, 2],
];
const TOTAL_WEIGHT = ACTIONS.reduce((sum, [, w]) => sum + w, 0);

export default function soakIteration() {
  if (!ensureSession()) return;
  let r = Math.random() * TOTAL_WEIGHT;
  for (const [action, weight] of ACTIONS) {
    r -= weight;
    if (r < 0) return action();
  }
}

export function handleSummary(data) {
  return __ENV.SOAK_SUMMARY_FILE ? { [__ENV.SOAK_SUMMARY_FILE]: JSON.stringify(data) } : {};
}
