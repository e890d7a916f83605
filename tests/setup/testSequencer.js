'use strict';
/**
 * The order jest starts test files in (jest.config.js testSequencer): the longest first, so that no long file starts
 * last and runs on alone after everything else has finished, with the browser files spread over the run. A file's length is its time in this
 * checkout's last run (jest's cache, when there is one), else its time in tests/setup/testDurations.json (a measured
 * full run, checked in: CI starts without a cache), else a guess from its size. A file that failed last time still
 * goes first, as with jest's own sequencer. Plain JS: jest loads it without a transform.
 */
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.resolve(__dirname, '..', '..');
const DURATIONS_FILE = path.join(__dirname, 'testDurations.json');

function measured() {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8')).seconds ?? {};
  } catch {
    return {};
  }
}

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const known = measured();
    const info = new Map();
    for (const test of tests) {
      const cached = this._getCache(test)[test.path];
      const listed = known[path.relative(ROOT, test.path).split(path.sep).join('/')];
      let seconds;
      if (cached && cached[1] > 0) seconds = cached[1] / 1000;
      else if (listed !== undefined) seconds = listed;
      else {
        // unmeasured (a new file): about a second per 2 KB of test code, at least a second
        let size = 0;
        try {
          size = fs.statSync(test.path).size;
        } catch {
          // removed meanwhile
        }
        seconds = Math.max(1, size / 2048);
      }
      if (cached && cached[1] > 0) test.duration = cached[1];
      info.set(test, { failed: Boolean(cached && cached[0] === 0), seconds });
    }
    const longestFirst = (list) => list.sort((a, b) => info.get(b).seconds - info.get(a).seconds);
    const failed = longestFirst(tests.filter((t) => info.get(t).failed));
    const rest = tests.filter((t) => !info.get(t).failed);
    return [...failed, ...spreadOut(longestFirst(rest.filter(usesChromium)), longestFirst(rest.filter((t) => !usesChromium(t))), info)];
  }
}

/** Browser test files drive the run's one Chromium (tests/setup/globalSetup.ts): several at once queue on it. */
function usesChromium(test) {
  return path.relative(ROOT, test.path).split(path.sep).join('/').startsWith('tests/browser/');
}

/**
 * Merges two longest-first lists so that each has done the same share of its own total at every point: the browser
 * files spread over the whole run beside the others, instead of all the long ones starting together (a third of
 * the run's file time is browser files; started together they ran 30-50 % slower, queued on Chromium).
 */
function spreadOut(browser, others, info) {
  const total = (list) => list.reduce((sum, t) => sum + info.get(t).seconds, 0) || 1;
  const [browserTotal, othersTotal] = [total(browser), total(others)];
  const order = [];
  let [b, o, browserDone, othersDone] = [0, 0, 0, 0];
  while (b < browser.length || o < others.length) {
    const takeBrowser = o >= others.length || (b < browser.length && browserDone / browserTotal <= othersDone / othersTotal);
    const test = takeBrowser ? browser[b++] : others[o++];
    order.push(test);
    if (takeBrowser) browserDone += info.get(test).seconds;
    else othersDone += info.get(test).seconds;
  }
  return order;
}

module.exports = SlowFirstSequencer;
