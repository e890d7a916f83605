/**
 * The Content-Security-Policy holds for the built front end: every view renders with zero CSP violations at a
 * desktop and a phone size, and stored files (signed /api/files links) still load into <img>.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../config/env';
import { createStorage } from '../../storage';
import { createTestUser, type TestUser } from '../support/accounts';
import { startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { renderBytes } from '../imageEdit/harness';

/** Runs in the page before its own scripts (the root tsconfig has no DOM types, so it is given as text). */
const RECORD_VIOLATIONS = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__cspViolations.push(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' at ' + event.sourceFile + ':' + event.lineNumber);
  });
`;

const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

let app: BrowserApp;
let user: TestUser;
let projectId: string;
let renderId: string;
/** A signed link to a short stored MP4, as the library and Approvals hand clips to <video>. */
let videoUrl: string;

beforeAll(async () => {
  app = await startBrowserApp();
  user = await createTestUser(app.baseUrl, { name: 'Csp Checker' });
  const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour View' } });
  projectId = project.body.project.id;
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('file', new Blob([new Uint8Array(await renderBytes(640, 480))], { type: 'image/png' }), 'harbour-render.png');
  const upload = await request<{ render: { data: { id: string } } }>(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect(upload.status).toBe(200);
  renderId = upload.body.render.data.id;

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csp-video-'));
  const file = path.join(dir, 'clip.mp4');
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=10', '-t', '1', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-movflags', '+faststart', file]);
  const storage = createStorage(loadConfig());
  const objectPath = `${user.id}/csp-${randomUUID()}.mp4`;
  await storage.objects.put('clips', objectPath, fs.readFileSync(file));
  videoUrl = storage.urls.sign('clips', objectPath);
  fs.rmSync(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

/** A context that records every CSP violation the page reports (the listener runs before the app's scripts). */
async function watchedContext(viewport: { width: number; height: number }, signedIn: boolean): Promise<{ context: BrowserContext; page: Page; consoleCsp: string[] }> {
  const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
  if (signedIn) await context.addCookies([{ name: 'rs_session', value: user.token, url: app.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  await context.addInitScript({ content: RECORD_VIOLATIONS });
  const page = await context.newPage();
  const consoleCsp: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) consoleCsp.push(msg.text());
  });
  return { context, page, consoleCsp };
}

async function visit(page: Page, path: string, heading: string | RegExp): Promise<string[]> {
  await page.goto(path);
  await page.getByRole('heading', { name: heading, level: 1 }).first().waitFor();
  await page.waitForLoadState('networkidle');
  return page.evaluate<string[]>('window.__cspViolations');
}

/** An <img> fed by a signed /api/files link (or a presigned object storage link) has loaded (a CSP or header problem leaves it broken). */
async function fileImageLoaded(page: Page): Promise<void> {
  await page.waitForFunction(`(() => {
    const img = document.querySelector('img[src*="/api/files/"], img[src*="X-Amz-Signature="]');
    return img !== null && img.complete && img.naturalWidth > 0;
  })()`);
}

describe('Content-Security-Policy in the browser', () => {
  for (const viewport of VIEWPORTS) {
    it(`shows the landing page and every dashboard view with zero CSP violations at ${viewport.width}x${viewport.height}`, async () => {
      const landing = await watchedContext(viewport, false);
      const found: Record<string, string[]> = {};
      try {
        found.landing = await visit(landing.page, '/', /./);
        found.signup = await visit(landing.page, '/?auth=signup', /./);
      } finally {
        await landing.context.close();
      }

      const dashboard = await watchedContext(viewport, true);
      try {
        const { page } = dashboard;
        found.projects = await visit(page, '/', 'Projects');
        found.library = await visit(page, `/?project=${projectId}`, 'Harbour View');
        // the render's thumbnail comes from a signed /api/files link and must load under the CSP
        await fileImageLoaded(page);
        // a stored clip plays in a <video> on the app's page under its CSP (media-src) and the file's own headers
        const played = await page.evaluate<string>(`new Promise((resolve) => {
          const video = document.createElement('video');
          video.muted = true;
          video.addEventListener('loadeddata', () => resolve('loaded ' + video.videoWidth + 'x' + video.videoHeight));
          video.addEventListener('error', () => resolve('error ' + (video.error && video.error.code)));
          video.src = ${JSON.stringify(videoUrl)};
          document.body.appendChild(video);
        })`);
        expect(played).toBe('loaded 160x90');
        found.approvals = await visit(page, '/?view=approvals', 'Content Approvals');
        for (const tab of ['profile', 'billing', 'security', 'settings']) {
          found[`account-${tab}`] = await visit(page, `/?view=account&tab=${tab}`, 'Account Settings');
        }
        found.clip = await visit(page, `/?view=clip-generation&project=${projectId}&render=${renderId}`, /Generate Clip/);
        found.editor = await visit(page, `/?view=image-generation&project=${projectId}&render=${renderId}`, 'Enhanced AI Editor');
        await fileImageLoaded(page);
        found.enhance = await visit(page, '/?view=enhance-set', /^Enhance Renders/);
        found.assembly = await visit(page, `/?view=video-assembly&project=${projectId}`, 'Video Assembly');
        expect({ found, console: [...landing.consoleCsp, ...dashboard.consoleCsp] }).toEqual({
          found: Object.fromEntries(Object.keys(found).map((k) => [k, []])),
          console: [],
        });
      } finally {
        await dashboard.context.close();
      }
      // about twenty views, each loaded and watched for violations: jest's 60 s default is for one step, not a walk
    }, 180_000);
  }
});
