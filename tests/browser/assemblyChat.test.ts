/**
 * Video Assembly's chat and clip panels in every state a visitor meets, at 1440x900 and 390x844, each audited with
 * axe (no serious or critical finding): clips loading, no clips at all, clips selected with the chat, a long
 * conversation, and the aesthetic mode. The chat follows the selection by itself (what is still needed never
 * asks for clips while clips are selected, and the server is told without a button), every field is shown in
 * words (no 'energy_level' or 'copy_style'), and the message box is named 'Message to the assistant'.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../config/env';
import type { AestheticChatAnswer } from '../../domain/assembly';
import { createStorage } from '../../storage';
import { createTestUser, type TestUser } from '../support/accounts';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, useSession, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { insertApprovedClips } from '../videoAssembly/clipFixtures';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

/** Words of the API that must never reach the screen. */
const RAW_KEYS = /energy_level|copy_style|missing_info|ready_to_create|wipeLeft|slideLeft/;

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
}, 120_000);

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

async function createProject(owner: TestUser, name: string): Promise<string> {
  const res = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: owner.token, json: { name } });
  if (res.status !== 201) throw new Error(`create project answered ${res.status}`);
  return res.body.project.id;
}

async function openAs(owner: TestUser, viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await app.browser.newContext({ baseURL: app.baseUrl, viewport });
  await useSession({ context, baseUrl: app.baseUrl }, owner.token);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  return { context, page, errors };
}

async function chatState(owner: TestUser, projectId: string): Promise<AestheticChatAnswer> {
  const res = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${projectId}/aesthetic`, { token: owner.token });
  return res.body;
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function noHorizontalScroll(page: Page): Promise<void> {
  expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
}

async function stillNeeded(page: Page): Promise<string[]> {
  const list = page.locator('.chat-missing');
  if ((await list.count()) === 0) return [];
  return list.locator('li > strong').allInnerTexts();
}

describe.each(SIZES)('Video Assembly chat at $name size', ({ name, viewport }) => {
  it('has no serious axe finding while the clips load and when there are none, and names the message box for the assistant', async () => {
    const owner = await createTestUser(app.baseUrl, { name: 'No Clips' });
    const projectId = await createProject(owner, 'Empty Harbour');
    const { context, page, errors } = await openAs(owner, viewport);
    try {
      // loading: the clips answer waits until the page has been audited
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route('**/api/video-assembly/clips', async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(`/?view=video-assembly&project=${projectId}`);
      await page.getByText('Loading clips...').waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      release();

      // no clips at all: the empty state in the tabs' panel, the chat beside it
      await page.getByRole('heading', { name: 'No landscape clips yet' }).waitFor();
      const chat = page.getByRole('region', { name: 'AI editor' });
      await chat.getByText('No messages yet.').waitFor();
      expect(await stillNeeded(page)).toEqual(['Clips', 'Aesthetic', 'Energy', 'Copy style']);
      await chat.getByLabel('Message to the assistant', { exact: true }).waitFor();
      expect(await chat.getByRole('button', { name: 'Sync clips' }).count()).toBe(0);
      expect(await page.locator('main').innerText()).not.toMatch(RAW_KEYS);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await page.getByRole('tab', { name: 'Portrait (0)' }).click();
      await page.getByRole('heading', { name: 'No portrait clips yet' }).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await noHorizontalScroll(page);
      await app.screenshot(`assembly-chat-empty-${name}`, page);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('follows the selection without a button, says every field in words, and stays accessible with a long conversation', async () => {
    const owner = await createTestUser(app.baseUrl, { name: 'Chat Owner' });
    const projectId = await createProject(owner, 'Harbour View');
    const clipIds = await insertApprovedClips(testKnex(), createStorage(loadConfig()), { userId: owner.id, projectId }, [
      { fileName: 'lobby.mp4', orientation: 'landscape', color: '#b45309' },
      { fileName: 'terrace.mp4', orientation: 'landscape', color: '#047857' },
      { fileName: 'pool.mp4', orientation: 'landscape', color: '#1d4ed8' },
    ]);
    const { context, page, errors } = await openAs(owner, viewport);
    try {
      await page.goto(`/?view=video-assembly&project=${projectId}`);
      const chat = page.getByRole('region', { name: 'AI editor' });
      await chat.getByText('No messages yet.').waitFor();
      expect(await stillNeeded(page)).toContain('Clips');

      // selecting is enough: the page stops asking for clips at once, and the server is told by itself
      for (const clip of ['lobby.mp4', 'terrace.mp4']) await page.getByRole('button', { name: `Select ${clip}` }).click();
      expect(await stillNeeded(page)).not.toContain('Clips');
      await eventually(async () => (await chatState(owner, projectId)).preferences.clip_selection.order.join() === clipIds.slice(0, 2).join(), 'the chat to know the selection');
      expect((await chatState(owner, projectId)).chat_history).toEqual([]);
      await chat.getByText('No messages yet.').waitFor();

      // a message: the reply, what is still needed in words, the editing config in words
      await chat.getByLabel('Message to the assistant', { exact: true }).fill('Modern and minimal please');
      await chat.getByRole('button', { name: 'Send' }).click();
      await page.locator('.chat-message-assistant').first().waitFor();
      await eventually(async () => JSON.stringify(await stillNeeded(page)) === JSON.stringify(['Energy', 'Copy style']), 'what is still needed after the reply');
      await chat.getByText('the pace: calm, balanced or energetic').waitFor();
      await chat.getByLabel('Editing config').getByText('wipe left, 0.5 s').waitFor();
      expect(await page.locator('main').innerText()).not.toMatch(RAW_KEYS);
      expect(await seriousAxeFindings(page)).toEqual([]);

      // the suggested order follows a third clip; clearing the selection asks for clips again, here and on the server
      await page.getByRole('button', { name: 'Select pool.mp4' }).click();
      await eventually(async () => (await chatState(owner, projectId)).clip_suggestions.length === 3, 'the suggestions to cover three clips');
      await chat.getByRole('list').filter({ hasText: 'pool.mp4' }).first().waitFor();
      await page.getByRole('button', { name: 'Clear selection' }).click();
      expect(await stillNeeded(page)).toEqual(['Clips', 'Energy', 'Copy style']);
      await eventually(async () => (await chatState(owner, projectId)).analysis.missing_info.includes('clips'), 'the server to ask for clips');
      await eventually(async () => (await chat.locator('.chat-clip-suggestions').count()) === 0, 'the suggestions for no clips to go');

      // a long conversation scrolls inside its own list, which the keyboard can reach and scroll
      const history = Array.from({ length: 60 }, (_, i) => ({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: i % 2 === 0 ? `Message ${i}: make the opening slower and warmer` : `Reply ${i}: the opening now fades in over a second`,
        timestamp: new Date(Date.now() - (60 - i) * 60_000).toISOString(),
      }));
      await testKnex()('aesthetic_chats').where({ project_id: projectId }).update({ chat_history: JSON.stringify(history) });
      await page.reload();
      const conversation = chat.getByRole('list', { name: 'Conversation' });
      await conversation.getByText('Reply 59: the opening now fades in over a second').waitFor();
      const scroll = () => conversation.evaluate((el) => ({ top: (el as unknown as { scrollTop: number }).scrollTop, height: (el as unknown as { scrollHeight: number }).scrollHeight, client: (el as unknown as { clientHeight: number }).clientHeight }));
      const atEnd = await scroll();
      expect(atEnd.height).toBeGreaterThan(atEnd.client);
      await conversation.focus();
      await page.keyboard.press('Home');
      await eventually(async () => (await scroll()).top < atEnd.top, 'the keyboard to scroll the conversation');
      expect(await seriousAxeFindings(page)).toEqual([]);
      await noHorizontalScroll(page);
      await app.screenshot(`assembly-chat-long-${name}`, page);

      // the aesthetic mode: the same names, its own title
      await page.getByRole('group', { name: 'Mode' }).getByRole('button', { name: 'Aesthetic' }).click();
      const aesthetic = page.getByRole('region', { name: 'Aesthetic' });
      await aesthetic.getByLabel('Message to the assistant', { exact: true }).waitFor();
      await aesthetic.getByLabel('Preferences').getByText('Energy').waitFor();
      expect(await page.locator('main').innerText()).not.toMatch(RAW_KEYS);
      expect(await seriousAxeFindings(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
