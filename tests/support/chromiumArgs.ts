/**
 * How the browser tests start Debian's Chromium (headless; the run's shared one in tests/setup/globalSetup.ts, or a
 * file's own in tests/support/browser.ts). Besides the flags this machine needs (no sandbox as root, no GPU, no
 * /dev/shm), the omnibox's WebUI popups are off: Chromium 156 preloads two of them in a renderer of their own for
 * every window, and every page of a browser context is a window, which cost about 0.16 s of CPU per page for a
 * popup no test opens.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-dev-shm-usage',
  '--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup',
];
