/**
 * What a browser test's pages did, written to the test file's log (tests/setup/testLogs.js) when their context
 * closes: the page's address, the start of its visible text, and its last console errors, page errors, failed
 * requests, error answers and slow API calls. A test that waited in vain for something on a page (a locator's
 * 30 s timeout) then leaves what the page showed instead beside the failure, whose message names the log.
 *
 * Cheap enough to run for every context: events go into a short ring per page; the text is read once, at close.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { logFileFor } = require('../setup/testLogs') as { logFileFor: (testPath: string) => string };

const EVENTS_KEPT = 25;
const TEXT_KEPT = 600;
/** an API call slower than this is noted (a page waiting on the server looks like a page that shows nothing) */
const SLOW_REQUEST_MS = 2000;
const WATCHED = Symbol.for('render-studio.browserDiagnostics');

function logFile(): string {
  const state = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.();
  return logFileFor(state?.testPath ?? path.join(__dirname, `jest-worker-${process.env.JEST_WORKER_ID ?? process.pid}`));
}

function currentTest(): string {
  const state = (globalThis as { expect?: { getState?: () => { currentTestName?: string } } }).expect?.getState?.();
  return state?.currentTestName ?? '(outside a test)';
}

function watchPage(page: Page, events: Map<Page, string[]>): void {
  const ring: string[] = [];
  events.set(page, ring);
  const note = (line: string) => {
    ring.push(`${new Date().toISOString().slice(11, 23)} ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
    if (ring.length > EVENTS_KEPT) ring.shift();
  };
  const started = new WeakMap<object, number>();
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') note(`console.${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => note(`page error: ${err.message}`));
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) note(`navigated to ${frame.url()}`);
  });
  page.on('request', (req) => started.set(req, Date.now()));
  page.on('requestfailed', (req) => note(`request failed: ${req.method()} ${req.url()} (${req.failure()?.errorText ?? 'no reason'})`));
  page.on('requestfinished', (req) => {
    const at = started.get(req);
    const took = at === undefined ? 0 : Date.now() - at;
    if (took >= SLOW_REQUEST_MS && req.url().includes('/api/')) note(`slow: ${req.method()} ${req.url()} took ${took} ms`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) note(`answer ${res.status()}: ${res.request().method()} ${res.url()}`);
  });
}

async function describePage(page: Page, ring: string[]): Promise<string> {
  let text = '(page closed)';
  if (!page.isClosed()) {
    try {
      const body = await page.locator('body').innerText({ timeout: 1000 });
      text = JSON.stringify(body.replace(/\s+/g, ' ').trim().slice(0, TEXT_KEPT));
    } catch (err) {
      text = `(text not read: ${(err as Error).message.split('\n')[0]})`;
    }
  }
  return [`  page ${page.url()}: ${text}`, ...ring.map((line) => `    ${line}`)].join('\n');
}

/** Watches a context's pages (those it has and those it opens) and writes what they did to the log at its close. */
export function watchContext(context: BrowserContext): BrowserContext {
  const marked = context as BrowserContext & { [WATCHED]?: true };
  if (marked[WATCHED]) return context;
  marked[WATCHED] = true;
  const events = new Map<Page, string[]>();
  for (const page of context.pages()) watchPage(page, events);
  context.on('page', (page) => watchPage(page, events));
  const close = context.close.bind(context);
  context.close = async (...args: Parameters<BrowserContext['close']>) => {
    try {
      // a page never used (the app's default page of a file that opens its own contexts) says nothing
      const used = [...events].filter(([page, ring]) => ring.length > 0 || (!page.isClosed() && page.url() !== 'about:blank'));
      const pages = await Promise.all(used.map(([page, ring]) => describePage(page, ring)));
      if (pages.length > 0) {
        const file = logFile();
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.appendFileSync(file, `${new Date().toISOString()} [INFO] browser context closed in "${currentTest()}":\n${pages.join('\n')}\n`);
      }
    } catch {
      // diagnostics never fail a test
    }
    return close(...args);
  };
  return context;
}

/**
 * Every context this browser opens is watched (tests open theirs with app.browser.newContext); closing the browser
 * closes the contexts still open first, so theirs are written too.
 */
export function watchBrowser(browser: Browser): Browser {
  const open = new Set<BrowserContext>();
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args: Parameters<Browser['newContext']>) => {
    const context = watchContext(await newContext(...args));
    open.add(context);
    context.on('close', () => open.delete(context));
    return context;
  };
  const close = browser.close.bind(browser);
  browser.close = async (...args: Parameters<Browser['close']>) => {
    await Promise.all([...open].map((context) => context.close().catch(() => undefined)));
    return close(...args);
  };
  return browser;
}
