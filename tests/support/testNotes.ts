/**
 * What a test measured and wants kept (timings, a tool's summary), written to the test file's log
 * (.data/test/logs/run-<pid>/<test file>.log, tests/setup/testLogs.js) instead of the terminal, which shows jest's
 * results only. A failing file's message names that log.
 */
import fs from 'node:fs';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { logFileFor } = require('../setup/testLogs');

export function testNote(text: string): void {
  const testPath = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.().testPath ?? `jest-worker-${process.pid}`;
  const file: string = logFileFor(testPath);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, `${new Date().toISOString()} [NOTE] ${text.replace(/\n+$/, '')}\n`);
}
