'use strict';
/**
 * The order jest starts test files in (jest.config.js testSequencer): the longest first, so that on 2 workers no
 * long file starts last and runs on alone after everything else has finished. A file's length is its time in this
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
    return [...tests].sort((a, b) => {
      const x = info.get(a);
      const y = info.get(b);
      if (x.failed !== y.failed) return x.failed ? -1 : 1;
      return y.seconds - x.seconds;
    });
  }
}

module.exports = SlowFirstSequencer;
