/**
 * The landing page as a visitor sees it, at 1440x900 and 390x844 (001 sections 1 and 2): the hero and demo
 * videos (real MP4s from the local clip pipeline) with posters, playing muted and looped while on screen unless the
 * visitor paused them or asked for reduced motion, each with its Pause / Play button, the sections in the spec's
 * order, three feature cards, two partner testimonials, the try-it area, pricing from the shared package table, and
 * the footer's social links; no console error for a signed-out visitor, and no serious axe finding.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CREDIT_PACKAGES } from '../../domain/constants';
import { displayPriceNzd } from '../../frontend/src/components/creditPackages';
import { seriousAxeFindings } from '../support/axe';
import { startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex } from '../support/db';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

const VIDEOS = [
  { label: 'Hero video: a residential building rendered from day to night', name: 'hero video', file: /\/assets\/hero-[\w-]+\.mp4$/, poster: /\/assets\/hero-poster-[\w-]+\.webp$/ },
  { label: 'Demo video: a Walk Through clip made from one interior render', name: 'demo video', file: /\/assets\/demo-[\w-]+\.mp4$/, poster: /\/assets\/demo-poster-[\w-]+\.webp$/ },
];

interface VideoState {
  src: string;
  poster: string;
  muted: boolean;
  loop: boolean;
  playsInline: boolean;
  autoplay: boolean;
  paused: boolean;
  currentTime: number;
  duration: number;
  videoWidth: number;
  controls: boolean;
}

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
});

afterAll(async () => {
  await app?.close();
  await closeTestKnex();
});

async function openLanding(browser: Browser, viewport: { width: number; height: number }, reducedMotion: 'reduce' | 'no-preference'): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ baseURL: app.baseUrl, viewport, reducedMotion });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // console errors too: a failed request (a 401 for the signed-out visitor's session) shows up here
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  await page.goto('/');
  await page.getByRole('heading', { name: 'Turn architectural renders into scroll-stopping video', level: 1 }).waitFor();
  return { context, page, errors };
}

function videoState(page: Page, label: string): Promise<VideoState> {
  return page.getByLabel(label, { exact: true }).evaluate((node) => {
    const v = node as unknown as VideoState & { currentSrc: string; getAttribute(name: string): string | null; hasAttribute(name: string): boolean };
    return {
      src: v.currentSrc || (v.getAttribute('src') ?? ''),
      poster: v.poster,
      muted: v.muted,
      loop: v.loop,
      playsInline: v.playsInline,
      autoplay: v.autoplay,
      paused: v.paused,
      currentTime: v.currentTime,
      duration: v.duration,
      videoWidth: v.videoWidth,
      controls: v.controls,
    };
  });
}

async function waitForTimeAdvance(page: Page, label: string): Promise<VideoState> {
  const video = page.getByLabel(label, { exact: true });
  await video.scrollIntoViewIfNeeded();
  const start = (await videoState(page, label)).currentTime;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const state = await videoState(page, label);
    // the videos loop: time that went back to before the start has passed the loop's end, which is playing too
    if (!state.paused && (state.currentTime > start + 0.3 || state.currentTime < start)) return state;
    if (Date.now() > deadline) throw new Error(`${label} did not play: ${JSON.stringify(state)}`);
    await page.waitForTimeout(200);
  }
}

describe.each(SIZES)('landing page at $name size', ({ name, viewport }) => {
  it('plays the hero and demo videos muted, looped and inline, each with its poster', async () => {
    const { context, page, errors } = await openLanding(app.browser, viewport, 'no-preference');
    try {
      for (const video of VIDEOS) {
        const state = await waitForTimeAdvance(page, video.label);
        expect(state.src).toMatch(video.file);
        expect(state.poster).toMatch(video.poster);
        expect(state).toMatchObject({ muted: true, loop: true, playsInline: true, controls: false });
        await page.getByRole('button', { name: `Pause the ${video.name}` }).waitFor();
        // a real 5 s, 1280-wide clip decoded by the browser
        expect(state.duration).toBeCloseTo(5, 0);
        expect(state.videoWidth).toBe(1280);
        const poster = await page.request.get(state.poster);
        expect(poster.status()).toBe(200);
        expect(poster.headers()['content-type']).toBe('image/webp');
      }
      await app.screenshot(`landing-${name}`, page);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('keeps both videos still on their posters when the visitor asks for reduced motion', async () => {
    const { context, page, errors } = await openLanding(app.browser, viewport, 'reduce');
    try {
      for (const video of VIDEOS) await page.getByLabel(video.label, { exact: true }).scrollIntoViewIfNeeded();
      await page.waitForTimeout(1500);
      for (const video of VIDEOS) {
        const state = await videoState(page, video.label);
        expect(state.poster).toMatch(video.poster);
        expect(state).toMatchObject({ autoplay: false, paused: true, currentTime: 0, muted: true, controls: false });
      }
      // the visitor may still choose to watch one
      await page.getByRole('button', { name: 'Play the hero video' }).click();
      await waitForTimeAdvance(page, VIDEOS[0].label);
      await page.getByRole('button', { name: 'Pause the hero video' }).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await app.screenshot(`landing-reduced-motion-${name}`, page);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('pauses a video on request and while it is off screen, and plays it again when it comes back', async () => {
    const { context, page, errors } = await openLanding(app.browser, viewport, 'no-preference');
    try {
      const hero = VIDEOS[0];
      await waitForTimeAdvance(page, hero.label);
      expect(await seriousAxeFindings(page)).toEqual([]);

      // the visitor's pause holds
      await page.getByRole('button', { name: 'Pause the hero video' }).click();
      await page.getByRole('button', { name: 'Play the hero video' }).waitFor();
      const stopped = await videoState(page, hero.label);
      expect(stopped.paused).toBe(true);
      await page.waitForTimeout(800);
      expect((await videoState(page, hero.label)).currentTime).toBe(stopped.currentTime);
      await page.getByRole('button', { name: 'Play the hero video' }).click();
      await waitForTimeAdvance(page, hero.label);

      // off screen it stops, back on screen it plays
      await page.getByRole('navigation', { name: 'Render Studio on social media' }).scrollIntoViewIfNeeded();
      const deadline = Date.now() + 10_000;
      while (!(await videoState(page, hero.label)).paused) {
        if (Date.now() > deadline) throw new Error('the hero video kept playing off screen');
        await page.waitForTimeout(100);
      }
      const away = (await videoState(page, hero.label)).currentTime;
      await page.waitForTimeout(800);
      expect((await videoState(page, hero.label)).currentTime).toBe(away);
      await waitForTimeAdvance(page, hero.label);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows the sections in order: promo, features, testimonials, try-it, pricing, then the footer with social links', async () => {
    const { context, page, errors } = await openLanding(app.browser, viewport, 'no-preference');
    try {
      const ids = await page.locator('main > section[id]').evaluateAll((nodes) => nodes.map((n) => (n as unknown as { id: string }).id));
      expect(ids).toEqual(['promo', 'features', 'testimonials', 'try-it', 'pricing']);

      const features = page.locator('#features .feature-card');
      expect(await features.count()).toBe(3);
      expect(await features.locator('h3').allTextContents()).toEqual(['AI image edits', 'Video clips from a still', 'Approve before you pay']);

      const testimonials = page.locator('#testimonials').getByRole('figure');
      expect(await testimonials.count()).toBe(2);
      for (const partner of ['Harbourline Developments', 'Whitfield Studio Architects']) {
        await page.locator('#testimonials').getByText(partner, { exact: false }).waitFor();
      }

      await page.locator('#try-it').getByText('JPG, PNG, WEBP up to 150MB').waitFor();

      const cards = page.locator('#pricing .package-card');
      expect(await cards.locator('h3').allTextContents()).toEqual(CREDIT_PACKAGES.map((p) => p.name));
      for (const pkg of CREDIT_PACKAGES) {
        const card = page.locator('#pricing .package-card', { has: page.getByRole('heading', { name: pkg.name }) });
        await card.getByText(displayPriceNzd(pkg.priceCents), { exact: false }).waitFor();
        await card.getByText(`${pkg.totalCredits}`, { exact: true }).waitFor();
      }

      const social = page.getByRole('navigation', { name: 'Render Studio on social media' });
      await social.scrollIntoViewIfNeeded();
      const links = social.getByRole('link');
      expect(await links.allTextContents()).toEqual(['Instagram', 'LinkedIn', 'YouTube', 'TikTok', 'Facebook']);
      for (let i = 0; i < (await links.count()); i++) {
        const link = links.nth(i);
        expect(await link.getAttribute('href')).toMatch(/^https:\/\/www\.(instagram|linkedin|youtube|tiktok|facebook)\.com\//);
        expect(await link.getAttribute('target')).toBe('_blank');
        expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
        expect(await link.isVisible()).toBe(true);
      }

      // nothing on the page scrolls sideways
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
