/**
 * Every view and every dialog of the app at a desktop (1440x900) and a phone (390x844) size, with real content
 * (a render, an approved clip, an assembled video, a pending AI image): nothing scrolls sideways (the page, or an
 * open dialog's box), axe-core finds no critical or serious violation, and the Content-Security-Policy is never
 * violated. The lists of views and dialogs are data: a new view is one line in VIEWS.
 */
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { uniqueTaskQueue } from '../support/temporal';
import { clipUser, startClip, startClipWorker, waitForJob, type ClipUser, type RunningWorker } from '../clips/fixtures';


/**
 * Runs in the page before its own scripts (the root tsconfig has no DOM types, so page code is given as text): records
 * CSP violations, and counts the page's requests in flight (settle() waits for none).
 */
const RECORD_CSP_VIOLATIONS = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__cspViolations.push(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' at ' + event.sourceFile + ':' + event.lineNumber);
  });
  window.__requestsInFlight = 0;
  const pageFetch = window.fetch;
  window.fetch = function (...args) {
    window.__requestsInFlight++;
    const response = pageFetch.apply(this, args);
    const done = () => { window.__requestsInFlight--; };
    response.then(done, done);
    return response;
  };
`;

const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** What the cases need to build their addresses. */
interface Seed {
  projectId: string;
  renderId: string;
}

type Who = 'visitor' | 'user' | 'admin';

interface ViewCase {
  name: string;
  who?: Who;
  path: (seed: Seed) => string;
  /** resolves once the view shows its content */
  ready: (page: Page) => Promise<unknown>;
}

interface DialogCase {
  name: string;
  who?: Who;
  path: (seed: Seed) => string;
  /** opens the dialog (the page is ready at `path`) and resolves once its content is there */
  open: (page: Page) => Promise<unknown>;
}

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor();
const button = (page: Page, name: string | RegExp) => page.getByRole('button', { name }).first();

const VIEWS: ViewCase[] = [
  { name: 'landing', who: 'visitor', path: () => '/', ready: (p) => p.locator('h1').first().waitFor() },
  { name: 'projects', path: () => '/?view=projects', ready: (p) => p.getByRole('button', { name: 'Open project Harbour View' }).waitFor() },
  { name: 'overview', path: (s) => `/?view=overview&project=${s.projectId}`, ready: (p) => p.locator('li.library-item[data-type="clip"]').waitFor() },
  { name: 'approvals', path: () => '/?view=approvals', ready: (p) => p.locator('.approval-card').first().waitFor() },
  { name: 'account profile', path: () => '/?view=account', ready: (p) => p.getByRole('tabpanel', { name: 'Profile' }).waitFor() },
  { name: 'account billing', path: () => '/?view=account&tab=billing', ready: (p) => p.getByRole('heading', { name: 'Credit packages' }).waitFor() },
  { name: 'account security', path: () => '/?view=account&tab=security', ready: (p) => p.getByRole('tabpanel', { name: 'Security' }).waitFor() },
  { name: 'account settings', path: () => '/?view=account&tab=settings', ready: (p) => p.getByRole('button', { name: /Delete Account/ }).waitFor() },
  { name: 'activity', path: () => '/?view=activity', ready: (p) => h1(p, 'Activity') },
  { name: 'clip-generation', path: (s) => `/?view=clip-generation&project=${s.projectId}&render=${s.renderId}`, ready: (p) => p.getByText('Choose Video Effect').waitFor() },
  { name: 'image-generation', path: (s) => `/?view=image-generation&project=${s.projectId}&render=${s.renderId}`, ready: (p) => h1(p, 'Enhanced AI Editor') },
  { name: 'video-assembly', path: () => '/?view=video-assembly', ready: (p) => p.getByRole('heading', { name: 'Your clips' }).waitFor() },
  // an account with no clips: the orientation tabs control an empty panel
  { name: 'video-assembly (no clips yet)', who: 'admin', path: () => '/?view=video-assembly', ready: (p) => p.getByRole('heading', { name: 'No landscape clips yet' }).waitFor() },
  { name: 'enhance-set (locked)', path: () => '/?view=enhance-set', ready: (p) => p.getByRole('heading', { name: 'Enter your access code' }).waitFor() },
  { name: 'review links', path: () => '/?view=review-links', ready: (p) => p.getByRole('button', { name: 'New review link' }).waitFor() },
  { name: 'brand kit', path: () => '/?view=brand-kit', ready: (p) => p.getByRole('button', { name: 'Save brand kit' }).waitFor() },
  { name: 'music', path: () => '/?view=music', ready: (p) => p.getByRole('heading', { name: 'Music', level: 1 }).waitFor() },
  { name: 'unknown view', path: () => '/?view=no-such-view', ready: (p) => p.getByRole('heading', { name: 'Page not found' }).waitFor() },
  { name: 'admin', who: 'admin', path: () => '/?view=admin', ready: (p) => h1(p, /Admin/) },
];

const DIALOGS: DialogCase[] = [
  { name: 'sign-up', who: 'visitor', path: () => '/?auth=signup', open: (p) => p.getByRole('dialog').getByRole('button', { name: /Create account|Sign up/ }).last().waitFor() },
  { name: 'new project', path: () => '/?view=projects', open: (p) => button(p, 'New Project').click() },
  {
    name: 'delete projects',
    path: () => '/?view=projects',
    open: async (p) => {
      await button(p, 'Edit Projects').click();
      await p.locator('.project-card').first().click();
      await button(p, /Delete Selected/).click();
    },
  },
  { name: 'render action center', path: (s) => `/?view=overview&project=${s.projectId}`, open: (p) => button(p, /^Open render /).click() },
  { name: 'clip player', path: (s) => `/?view=overview&project=${s.projectId}`, open: (p) => button(p, /^Open clip /).click() },
  { name: 'assembled video', path: (s) => `/?view=overview&project=${s.projectId}`, open: (p) => button(p, /^Open video /).click() },
  { name: 'delete item', path: (s) => `/?view=overview&project=${s.projectId}`, open: (p) => button(p, /^Delete /).click() },
  { name: 'approval preview', path: () => '/?view=approvals', open: (p) => button(p, /^Expand /).click() },
  { name: 'new review link', path: () => '/?view=review-links', open: (p) => button(p, 'New review link').click() },
  { name: 'delete account', path: () => '/?view=account&tab=settings', open: (p) => button(p, /Delete Account/).click() },
];

interface Finding {
  where: string;
  problem: string;
}

/** Sideways scrolling of the page and of each open dialog, and anything of a dialog drawn outside its box. */
async function overflowProblems(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const problems = [];
    const doc = document.documentElement;
    if (doc.scrollWidth > doc.clientWidth) problems.push('page scrolls sideways: ' + doc.scrollWidth + ' > ' + doc.clientWidth);
    // content cut off at the window's right edge counts too (a clipping ancestor hides the scroll, not the problem)
    const main = document.querySelector('main');
    if (main && main.scrollWidth > main.clientWidth + 1) problems.push('main content wider than its column: ' + main.scrollWidth + ' > ' + main.clientWidth);
    const wide = [...document.querySelectorAll('main *, header *')].filter((el) => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= window.innerWidth + 1) return false;
      for (let a = el.parentElement; a; a = a.parentElement) {
        const overflowX = getComputedStyle(a).overflowX;
        if (overflowX !== 'visible' && a.getBoundingClientRect().right <= window.innerWidth + 1) return false;
      }
      return !el.closest('.sidebar');
    });
    for (const el of wide.slice(0, 3)) problems.push('wider than the window: ' + (el.className || el.tagName) + ' reaches ' + Math.round(el.getBoundingClientRect().right) + 'px');
    for (const dialog of document.querySelectorAll('dialog[open]')) {
      const box = dialog.getBoundingClientRect();
      if (box.left < 0 || box.right > window.innerWidth + 0.5) problems.push('dialog outside the window: ' + box.left + '..' + box.right);
      for (const el of [dialog, ...dialog.querySelectorAll('.dialog-panel')]) {
        if (el.scrollWidth > el.clientWidth) problems.push('dialog content wider than its box (' + (el.className || el.tagName) + '): ' + el.scrollWidth + ' > ' + el.clientWidth);
      }
      for (const el of dialog.querySelectorAll('h2, button, video, img, a')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0) continue;
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5) problems.push('"' + (el.textContent || el.getAttribute('aria-label') || el.tagName).trim().slice(0, 40) + '" sticks out of its dialog');
      }
      // a button whose label wraps onto three or more lines is a blob, not a button
      for (const el of dialog.querySelectorAll('.button')) {
        const lineHeight = parseFloat(getComputedStyle(el).lineHeight) || 20;
        if (el.getBoundingClientRect().height > lineHeight * 2.6 + 24) problems.push('button "' + el.textContent.trim() + '" wraps: ' + Math.round(el.getBoundingClientRect().height) + 'px tall');
      }
    }
    return problems;
  })()`);
}

/** The CSP violations recorded since the page loaded or the last call (each is reported once, where it was seen). */
async function cspProblems(page: Page): Promise<string[]> {
  return (await page.evaluate('(window.__cspViolations || []).splice(0)')) as string[];
}

/**
 * Waits until the page is still before measuring: loaded, no request of its own in flight, the pictures and videos in
 * the window loaded (or failed), and no finite animation or transition (the slide-in menu, dialogs) running, for three
 * frames in a row (an endless animation, a spinner, is not waited for). Answers what was still busy after 15 s, the
 * page's timeout for everything else here, or null.
 */
async function settle(page: Page): Promise<string | null> {
  await page.waitForLoadState('load');
  // page.evaluate, not waitForFunction: the latter evaluates its text with eval(), which the app's CSP forbids
  return (await page.evaluate(`new Promise((resolve) => {
    const inWindow = (el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
    };
    const started = performance.now();
    let quiet = 0;
    const check = () => {
      const busy = [];
      if (window.__requestsInFlight > 0) busy.push(window.__requestsInFlight + ' requests');
      for (const img of document.images) if (!img.complete && (img.loading !== 'lazy' || inWindow(img))) busy.push('picture ' + img.src);
      for (const v of document.querySelectorAll('video')) if (v.preload !== 'none' && v.currentSrc && !v.error && v.readyState < 1 && inWindow(v)) busy.push('video ' + v.currentSrc);
      for (const a of document.getAnimations()) {
        if (a.playState === 'running' && a.effect && Number.isFinite(a.effect.getComputedTiming().endTime)) busy.push('animation ' + (a.animationName || a.transitionProperty || ''));
      }
      quiet = busy.length ? 0 : quiet + 1;
      if (quiet >= 3) resolve(null);
      else if (performance.now() - started > 15000) resolve(busy.join(', '));
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  })`)) as string | null;
}

let app: BrowserApp;
let worker: RunningWorker;
let user: ClipUser;
let admin: TestUser;
const seed: Seed = { projectId: '', renderId: '' };
const taskQueue = uniqueTaskQueue('all-views');

beforeAll(async () => {
  app = await startBrowserApp({
    taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue },
    config: () => ({ videoPreset: 'ultrafast' }),
  });
  worker = await startClipWorker(taskQueue);
  user = await clipUser(app.baseUrl);
  admin = await createTestUser(app.baseUrl, { name: 'Ada Admin' });
  await makeAdmin(testKnex(), admin.id);
  seed.projectId = user.projectId;
  seed.renderId = user.renderId;

  // an approved clip in the library (4 of the 5 credits) ...
  const started = await startClip(app.baseUrl, user, { movement: 'Zoom In', platform: 'YouTube' });
  expect(started.body.jobId).toBeDefined();
  const { job } = await waitForJob(app.baseUrl, user, started.body.jobId!);
  expect(job.status).toBe('completed');
  const approved = await request(app.baseUrl, '/api/approvals/approve', { token: user.token, json: { approvalId: job.result!.approvalId } });
  expect(approved.status).toBe(200);
  // ... an assembled video made of it (the assembly screen comes with its own issue: the row as an approved one) ...
  const clip = await testKnex()('clips').where({ project_id: user.projectId }).first();
  await testKnex()('compiled_videos').insert({
    project_id: user.projectId,
    workspace_id: user.id,
    file_url: clip.file_url,
    file_name: 'Harbour View - YouTube assembly.mp4',
    duration: 5,
    clip_ids: [clip.id],
    editing_data: { status: 'approved', platform: 'youtube', aspect_ratio: '16:9' },
    storage_bucket: clip.storage_bucket,
    storage_path: clip.storage_path,
    storage_mime: clip.storage_mime,
    storage_size: clip.storage_size,
  });
  // ... and an AI image waiting in Approvals (the last credit)
  const image = await request(app.baseUrl, '/api/ai-image-simple', {
    token: user.token,
    json: {
      workflow: 'ENHANCED_IMAGE_EDITING',
      context: { projectId: user.projectId, userId: user.id, userIntent: 'test', platform: 'web' },
      parameters: { prompt: 'a warm dusk with lights in every window', baseImage: user.renderId },
    },
  });
  expect(image.status).toBe(200);
}, 240_000);

afterAll(async () => {
  await app?.close();
  await worker?.stop();
  await closeTestKnex();
});

async function contextFor(who: Who, viewport: { width: number; height: number }): Promise<BrowserContext> {
  const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
  await context.addInitScript(RECORD_CSP_VIOLATIONS);
  if (who !== 'visitor') await useSession({ context, baseUrl: app.baseUrl }, who === 'admin' ? admin.token : user.token);
  return context;
}

async function audit(page: Page, where: string, findings: Finding[]): Promise<void> {
  const busy = await settle(page);
  if (busy) findings.push({ where, problem: `still busy after 15 s: ${busy}` });
  for (const problem of await overflowProblems(page)) findings.push({ where, problem });
  for (const problem of await seriousAxeFindings(page)) findings.push({ where, problem });
  for (const problem of await cspProblems(page)) findings.push({ where, problem: `CSP: ${problem}` });
}

describe.each(VIEWPORTS)('every view and dialog at $name size ($width x $height)', (viewport) => {
  const contexts = new Map<Who, BrowserContext>();
  /** Each visitor's one page, and its uncaught errors since the last look (pageErrors() hands them over). */
  const pages = new Map<Who, { page: Page; errors: string[] }>();
  async function pageFor(who: Who = 'user'): Promise<Page> {
    let context = contexts.get(who);
    if (!context) {
      context = await contextFor(who, viewport);
      contexts.set(who, context);
    }
    let open = pages.get(who);
    if (!open) {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      open = { page, errors: [] };
      const { errors } = open;
      page.on('pageerror', (err) => errors.push(err.message));
      pages.set(who, open);
    }
    return open.page;
  }
  function pageErrors(who: Who = 'user'): string[] {
    const open = pages.get(who);
    return open ? open.errors.splice(0) : [];
  }

  afterAll(async () => {
    for (const context of contexts.values()) await context.close();
  });

  it('shows every view without sideways scrolling, serious axe violations or CSP violations', async () => {
    const findings: Finding[] = [];
    for (const view of VIEWS) {
      // each view loaded afresh from its address, in its visitor's one page
      const page = await pageFor(view.who);
      pageErrors(view.who);
      await page.goto(view.path(seed));
      try {
        await view.ready(page);
      } catch (error) {
        findings.push({ where: view.name, problem: `not shown: ${(error as Error).message.split('\n')[0]}` });
        continue;
      }
      await audit(page, view.name, findings);
      if (viewport.name === 'phone' && view.name === 'projects') {
        // the slide-in menu, open
        await page.getByRole('button', { name: 'Open menu' }).click();
        await audit(page, `${view.name} (menu open)`, findings);
      }
      for (const error of pageErrors(view.who)) findings.push({ where: view.name, problem: `page error: ${error}` });
    }
    expect(findings).toEqual([]);
  }, 600_000);

  it('opens every dialog with its content inside its box, no serious axe violations and no CSP violations', async () => {
    const findings: Finding[] = [];
    // dialogs opened from the same address share one load: each is closed (Escape) before the next is opened there
    let shown: string | null = null;
    for (const dialog of DIALOGS) {
      const who = dialog.who ?? 'user';
      const at = `${who} ${dialog.path(seed)}`;
      const page = await pageFor(who);
      try {
        if (shown !== at) {
          shown = null;
          await page.goto(dialog.path(seed));
          await page.locator('main h1, .landing h1').first().waitFor();
          shown = at;
        }
        await dialog.open(page);
        const open: Locator = page.locator('dialog[open]');
        await open.first().waitFor();
      } catch (error) {
        shown = null;
        findings.push({ where: `${dialog.name} dialog`, problem: `not opened: ${(error as Error).message.split('\n')[0]}` });
        continue;
      }
      await audit(page, `${dialog.name} dialog`, findings);
      try {
        await page.keyboard.press('Escape');
        await page.locator('dialog[open]').first().waitFor({ state: 'detached' });
      } catch {
        // still open: the next dialog gets a fresh load of its address
        shown = null;
      }
    }
    expect(findings).toEqual([]);
  }, 600_000);
});
