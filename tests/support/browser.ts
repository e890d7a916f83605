/**
 * Browser tests: the real API (routes + the built front end from frontend/dist) on an ephemeral port and a
 * headless Debian Chromium driven by playwright-core. `npm test` builds frontend/dist before jest runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Download, type Page } from 'playwright-core';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { watchBrowser } from './browserDiagnostics';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { CHROMIUM_ARGS } from './chromiumArgs';
import { testKnex } from './db';
import { closedPort, serve } from './http';
import { issueAccountToken } from '../../services/accounts/accountTokens';
import { ACCOUNT_SECURITY_MSG, EMAIL_VERIFICATION_TTL_MS } from '../../domain/accountSecurity';

const ROOT = path.resolve(__dirname, '..', '..');
export const FRONTEND_DIST = path.join(ROOT, 'frontend', 'dist');

export interface BrowserApp {
  baseUrl: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Uncaught exceptions in the page: a healthy page has none. */
  pageErrors: string[];
  /** console.error output and failed resource loads (an expected 404 shows up here too). */
  consoleErrors: string[];
  /** Saves a full-page PNG of `page` (default: the app's page) under BROWSER_SCREENSHOTS_DIR and returns its path; takes none when that is unset. */
  screenshot: (name: string, of?: Page) => Promise<string | null>;
  /** Closes the browser, then the server. Safe to call twice. */
  close: () => Promise<void>;
}

export interface BrowserAppOptions {
  viewport?: { width: number; height: number };
  /** Task queues the served API starts workflows on (a test's own worker polls them). */
  taskQueues?: AppDeps['taskQueues'];
  /** Configuration over loadConfig()'s, given the address the app will be served at (e.g. PUBLIC_URL, Stripe). */
  config?: (baseUrl: string) => Partial<AppConfig>;
}

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
}

function assertFrontendBuilt(): void {
  if (!fs.existsSync(path.join(FRONTEND_DIST, 'index.html'))) {
    throw new Error(
      `No built front end at ${FRONTEND_DIST}. Run \`npm test\` (it builds it first) or ` +
        '`npx vite build --config frontend/vite.config.ts` before running browser tests alone.',
    );
  }
}

/**
 * The run's Chromium when globalSetup started one (CHROMIUM_WS_ENDPOINT): a connection of this file's own, whose
 * browser contexts are closed when it closes; else a Chromium of its own.
 */
export async function launchChromium(): Promise<Browser> {
  const shared = process.env.CHROMIUM_WS_ENDPOINT;
  if (shared) return chromium.connect(shared);
  const executablePath = chromiumPath();
  if (!fs.existsSync(executablePath)) {
    throw new Error(`Chromium not found at ${executablePath}: install Debian's chromium package or set CHROMIUM_PATH`);
  }
  return chromium.launch({
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/** A download's bytes (download.path() is not available on the run's shared Chromium, a remote browser). */
export async function downloadedBytes(download: Download): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Signs the browser context in with a session token (e.g. from createTestUser), as the sign-in form would. */
export async function useSession(app: Pick<BrowserApp, 'context' | 'baseUrl'>, token: string): Promise<void> {
  await app.context.addCookies([{ name: 'rs_session', value: token, url: app.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
}

/** Serves the API and the built front end, opens Chromium on it and returns a page whose relative URLs hit it. */
export async function startBrowserApp(options: BrowserAppOptions = {}): Promise<BrowserApp> {
  assertFrontendBuilt();
  // a configuration that depends on the app's own address needs the port before the app is built
  const port = options.config ? await closedPort() : 0;
  const overrides = options.config ? options.config(`http://127.0.0.1:${port}`) : {};
  const config = { ...loadConfig(), frontendDist: FRONTEND_DIST, ...overrides };
  const app = createApp({ config, knex: testKnex(), logger, taskQueues: options.taskQueues });
  const server = await serve(app, port);
  let browser: Browser;
  try {
    browser = watchBrowser(await launchChromium());
  } catch (err) {
    await server.close();
    throw err;
  }
  const context = await browser.newContext({ baseURL: server.baseUrl, viewport: options.viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  const screenshot = async (name: string, of: Page = page) => {
    const dir = process.env.BROWSER_SCREENSHOTS_DIR;
    if (!dir) return null;
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}.png`);
    await of.screenshot({ path: file, fullPage: true });
    return file;
  };

  let closed: Promise<void> | null = null;
  const close = () => {
    closed ??= (async () => {
      try {
        await browser.close();
      } finally {
        await server.close();
      }
    })();
    return closed;
  };
  return { baseUrl: server.baseUrl, browser, context, page, pageErrors, consoleErrors, screenshot, close };
}

// ---------- helpers for the Teams browser tests (issue 27) ----------

/** Signs up through the landing page's form (`/?auth=signup`) and waits for the dashboard. */
export async function signUpInBrowser(page: Page, user: { name: string; email: string; password: string }): Promise<void> {
  await page.goto('/?auth=signup');
  const form = page.getByRole('form', { name: 'Sign up' });
  await form.getByLabel('Full name').fill(user.name);
  await form.getByLabel('Email').fill(user.email);
  await form.getByLabel('Password').fill(user.password);
  await form.getByRole('button', { name: 'Create account' }).click();
  // attached, not visible: at phone sizes the sidebar is a closed slide-in menu
  await page.locator('aside.sidebar').waitFor({ state: 'attached' });
}

/**
 * Verifies the account's e-mail the way its link does: issues a verification link as the sign-up's e-mail would carry
 * (the app of these tests sends no e-mail) and opens it in `page`, which then says the address is verified.
 */
export async function verifyEmailInBrowser(page: Page, email: string): Promise<void> {
  const user = (await testKnex()('users').where({ email: email.toLowerCase() }).first('id')) as { id: string };
  const token = await issueAccountToken(testKnex(), { userId: user.id, purpose: 'verify', ttlMs: EMAIL_VERIFICATION_TTL_MS });
  await page.goto(`/?verify=${token}`);
  await page.getByText(ACCOUNT_SECURITY_MSG.emailVerified).waitFor();
}

/** At phone sizes the sidebar is a slide-in menu: opens it when it is closed; at desktop sizes it is always there. */
export async function openSidebar(page: Page): Promise<void> {
  const toggle = page.getByRole('button', { name: 'Open menu' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByRole('complementary', { name: 'Sidebar' }).waitFor({ state: 'visible' });
}

/** The session token of a browser context (its rs_session cookie), to call the API as that user. */
export async function sessionTokenOf(context: BrowserContext, baseUrl: string): Promise<string> {
  const cookie = (await context.cookies(baseUrl)).find((c) => c.name === 'rs_session');
  if (!cookie) throw new Error('sessionTokenOf: the context has no session');
  return cookie.value;
}

/** On the Members page: invites `email` with `role` through the form and answers the link the page shows. */
export async function inviteFromMembersPage(page: Page, email: string, role: 'viewer' | 'member' | 'admin'): Promise<string> {
  const form = page.getByRole('form', { name: 'Invite someone' });
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Role').selectOption(role);
  await form.getByRole('button', { name: 'Send invitation' }).click();
  const field = page.getByLabel('Invitation link');
  await field.waitFor();
  return field.inputValue();
}

/** Drops one image file on `selector` as a user dragging it from their desktop would (a DataTransfer with a File). */
export async function dropImageFile(page: Page, selector: string, name: string, bytes: Buffer, type = 'image/png'): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    ([fileName, base64, mime]) => {
      const g = globalThis as unknown as {
        DataTransfer: new () => { items: { add(file: unknown): void } };
        File: new (parts: unknown[], name: string, options: { type: string }) => unknown;
        atob(text: string): string;
      };
      const binary = g.atob(base64);
      const data = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) data[i] = binary.charCodeAt(i);
      const transfer = new g.DataTransfer();
      transfer.items.add(new g.File([data], fileName, { type: mime }));
      return transfer;
    },
    [name, bytes.toString('base64'), type] as const,
  );
  await page.locator(selector).dispatchEvent('drop', { dataTransfer });
}

/**
 * Starts watching for `text` to be shown, before the action that shows it, and answers a function that waits for it:
 * a message the app shows only for a moment (the editor's "sent for approval" before it moves on to Approvals) is
 * seen however slowly the test process gets to look, since the page itself checks on every change of its DOM (a
 * MutationObserver runs before any timer of the app that would take the message away).
 */
export async function watchForText(page: Page, text: string, timeoutMs = 60_000): Promise<() => Promise<void>> {
  const flag = `__shown_${Math.random().toString(36).slice(2)}`;
  await page.evaluate(
    ([key, wanted]) => {
      const g = globalThis as unknown as Record<string, unknown> & {
        document: { body: { innerText: string } };
        MutationObserver: new (callback: () => void) => { observe(target: unknown, options: Record<string, boolean>): void; disconnect(): void };
      };
      g[key] = false;
      const observer = new g.MutationObserver(() => check());
      const check = () => {
        if (g.document.body.innerText.includes(wanted)) {
          g[key] = true;
          observer.disconnect();
        }
      };
      observer.observe(g.document.body, { childList: true, subtree: true, characterData: true });
      check();
    },
    [flag, text] as const,
  );
  return () => page.waitForFunction((key) => (globalThis as unknown as Record<string, unknown>)[key] === true, flag, { timeout: timeoutMs }).then(() => undefined);
}

/**
 * A page signed in as `user` in a browser context of its own (its own cookies, as a second person's browser), with the
 * page's uncaught errors collected. The context is added to `contexts` for the test file to close.
 */
export async function pageAs(
  app: Pick<BrowserApp, 'browser' | 'baseUrl'>,
  user: { token: string },
  viewport: { width: number; height: number },
  contexts: BrowserContext[],
): Promise<{ page: Page; errors: string[] }> {
  const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
  contexts.push(context);
  await useSession({ context, baseUrl: app.baseUrl }, user.token);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, errors };
}

/** The page is no wider than its viewport: nothing makes the reader scroll sideways. */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
  expect(overflow).toBeLessThanOrEqual(0);
}

/** The name a person's profile shows (and the app names them by in histories and badges). */
export async function profileName(user: { id: string }): Promise<string> {
  const row = (await testKnex()('profiles').where({ id: user.id }).first('name')) as { name: string } | undefined;
  if (!row) throw new Error(`profileName: no profile ${user.id}`);
  return row.name;
}
