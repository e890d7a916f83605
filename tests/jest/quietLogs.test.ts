/**
 * `npm test` prints jest's results, not the Temporal SDK's worker lines or webpack's bundle reports: inside jest
 * `@temporalio/worker` is tests/setup/temporalWorker.ts, which writes them to this file's log
 * (tests/setup/testLogs.js), and tests/setup/logReporter.js names that log under a failure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { uniqueTaskQueue } from '../support/temporal';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { logFileFor, lastProblems } = require('../setup/testLogs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const LogReporter = require('../setup/logReporter');

const logFile: string = logFileFor(expect.getState().testPath);

function readLog(): string {
  return fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
}

/** Everything written through process.stderr while `fn` runs. */
async function stderrDuring(fn: () => Promise<void>): Promise<string> {
  const written: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(String(chunk));
    return original(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = original;
  }
  return written.join('');
}

describe('Temporal and webpack output in a test', () => {
  test("a worker's state changes go to the test file's log, not the terminal", async () => {
    const taskQueue = uniqueTaskQueue('quiet-logs');
    const printed = await stderrDuring(async () => {
      const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
      try {
        const worker = await Worker.create({ connection, taskQueue, workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH! } });
        await worker.runUntil(new Promise((resolve) => setTimeout(resolve, 300)));
      } finally {
        await connection.close();
      }
    });
    const log = readLog();
    expect(log).toContain('Worker state changed');
    expect(log).toContain(taskQueue);
    expect(printed).not.toContain('Worker state changed');
    expect(printed).not.toContain(taskQueue);
  });

  test("webpack's bundle report goes to the log", async () => {
    const printed = await stderrDuring(async () => {
      await bundleWorkflowCode({ workflowsPath: require.resolve('../temporal/workflows/deadline') });
    });
    expect(readLog()).toMatch(/webpack [\d.]+ compiled successfully/);
    expect(readLog()).toContain('Workflow bundle created');
    expect(printed).not.toContain('webpack');
  }, 90_000);

  test("a mocked activity's failure (MockActivityEnvironment) goes to the log, not the console", async () => {
    const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const printed = await stderrDuring(async () => {
        const failing = async () => {
          throw new Error('quiet-logs mocked activity failure');
        };
        await expect(new MockActivityEnvironment().run(failing)).rejects.toThrow('quiet-logs mocked activity failure');
      });
      expect(readLog()).toMatch(/\[WARN\] Activity failed /);
      expect(printed).not.toContain('Activity failed');
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
  });
});

describe('logReporter', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-log-reporter-'));
  const testFilePath = path.join(__dirname, 'example.test.ts');
  const file: string = logFileFor(testFilePath, dir);
  const previous = process.env.TEST_LOG_DIR;

  beforeAll(() => {
    process.env.TEST_LOG_DIR = dir;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const lines = ['2030-01-01T00:00:00.000Z [INFO] Worker state changed {"state":"RUNNING"}'];
    for (let i = 1; i <= 20; i++) lines.push(`2030-01-01T00:00:0${i % 10}.000Z [${i % 2 ? 'WARN' : 'ERROR'}] problem ${i}`);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
  });
  afterAll(() => {
    if (previous === undefined) delete process.env.TEST_LOG_DIR;
    else process.env.TEST_LOG_DIR = previous;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a failing file's message names its log and shows the log's last warnings and errors", () => {
    const result = { testFilePath, failureMessage: '  ● example\n\n    expected 1 to be 2\n' };
    new LogReporter().onTestFileResult({}, result);
    expect(result.failureMessage).toContain('expected 1 to be 2');
    expect(result.failureMessage).toContain(path.relative(process.cwd(), file));
    expect(result.failureMessage).toContain('problem 20');
    expect(result.failureMessage).toContain('problem 6');
    expect(result.failureMessage).not.toContain('problem 5\n');
    expect(result.failureMessage).not.toContain('Worker state changed');
    expect(lastProblems(file, 15)).toHaveLength(15);
  });

  test('a passing file is left as it is', () => {
    const result = { testFilePath, failureMessage: null };
    new LogReporter().onTestFileResult({}, result);
    expect(result.failureMessage).toBeNull();
  });
});
