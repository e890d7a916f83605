/**
 * The suite's runner (tests/setup/crashRetryRunner.js) runs a file once more, in a new worker, when its jest worker
 * process died of SIGABRT; a file that aborts again, and a test that simply fails, fail as with jest's own runner.
 * jest runs for real on the fixture files in tests/jest/fixtures/crashRetry (their workers call process.abort()).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const FIXTURES = path.join(__dirname, 'fixtures', 'crashRetry');

interface JestJson {
  success: boolean;
  testResults: { name: string; status: string; message: string }[];
}

function runJest(dir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', path.join(FIXTURES, 'jest.config.js'), '--ci', '--cacheDirectory', path.join(dir, 'cache'), '--json', '--outputFile', path.join(dir, 'results.json')],
      // a worker's abort() writes no core file here
      { cwd: ROOT, env: { ...process.env, CRASH_RETRY_DIR: dir, NODE_OPTIONS: '' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

test('a file whose worker aborted runs once more; a second abort and a failing test still fail', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crash-retry-'));
  try {
    const { code, stderr } = await runJest(dir);
    const results = JSON.parse(fs.readFileSync(path.join(dir, 'results.json'), 'utf8')) as JestJson;
    const byFile = new Map(results.testResults.map((r) => [path.basename(r.name), r]));

    expect(byFile.get('abortsOnce.check.js')?.status).toBe('passed');
    expect(byFile.get('abortsAlways.check.js')?.status).toBe('failed');
    expect(byFile.get('abortsAlways.check.js')?.message).toMatch(/terminated by another process: signal=SIGABRT/);
    expect(byFile.get('fails.check.js')?.status).toBe('failed');
    expect(results.success).toBe(false);
    expect(code).toBe(1);

    // the always-aborting file ran twice (once more, not more), the failing test once
    expect(fs.readFileSync(path.join(dir, 'always-runs'), 'utf8')).toBe('xx');
    expect(fs.readFileSync(path.join(dir, 'fails-runs'), 'utf8')).toBe('x');
    expect(stderr).toContain('abortsOnce.check.js: its jest worker process was killed by SIGABRT');
    expect(stderr).toContain('abortsAlways.check.js: its jest worker process was killed by SIGABRT');
    expect(stderr).not.toContain('fails.check.js: its jest worker process was killed');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
