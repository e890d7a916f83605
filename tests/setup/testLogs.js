'use strict';
/**
 * Where a jest run's background output goes: the Temporal SDK's worker and core lines and webpack's workflow
 * bundle reports are written to one log file per test file under .data/test/logs/run-<pid>/ instead of the
 * terminal (tests/setup/temporalWorker.ts writes them, tests/setup/logReporter.js names the file of a failing test).
 * Plain JS: the reporter is loaded by jest without a transform.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const LOGS_ROOT = path.join(ROOT, '.data', 'test', 'logs');
/** Log folders of earlier runs are removed once they are this old. */
const KEEP_MS = 24 * 60 * 60 * 1000;

/** The run's log folder; globalSetup sets TEST_LOG_DIR, a test file run without it (no globalSetup) gets one of its own. */
function runLogDir() {
  return process.env.TEST_LOG_DIR || path.join(LOGS_ROOT, `run-${process.pid}`);
}

/** The log file of one test file: the run's folder, then the test's path inside the repository. */
function logFileFor(testPath, dir = runLogDir()) {
  return path.join(dir, `${path.relative(ROOT, testPath)}.log`);
}

/** Path relative to the repository, as printed to the terminal. */
function shown(file) {
  return path.relative(process.cwd(), file) || file;
}

/** Removes log folders of runs older than a day (a run's own folder is new). */
function pruneOldRuns(now = Date.now()) {
  if (!fs.existsSync(LOGS_ROOT)) return;
  for (const name of fs.readdirSync(LOGS_ROOT)) {
    const dir = path.join(LOGS_ROOT, name);
    try {
      if (now - fs.statSync(dir).mtimeMs > KEEP_MS) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run removed it first
    }
  }
}

/** The last `count` lines of `file` at WARN or ERROR level (the first line of each entry). */
function lastProblems(file, count) {
  if (!fs.existsSync(file)) return [];
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  return lines.filter((line) => / \[(WARN|ERROR)\] /.test(line)).slice(-count);
}

module.exports = { ROOT, LOGS_ROOT, runLogDir, logFileFor, shown, pruneOldRuns, lastProblems };
