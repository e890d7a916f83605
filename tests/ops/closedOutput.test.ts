/**
 * scripts/lib/closedOutput.js: a script whose reader has gone (npm or jest killed) stops, instead of failing on
 * every write and reporting that failure by writing again, at full CPU, for ever (as scripts/scaleOut.js once did
 * after a SIGKILLed jest).
 */
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const HELPER = path.resolve(__dirname, '../../scripts/lib/closedOutput.js');

/** A script shaped like scripts/start.js: reports on stderr, and reports an uncaught failure there too. */
function script(withHelper: boolean, goneFile: string): string {
  return `
    const fs = require('node:fs');
    const stop = () => { fs.writeFileSync(${JSON.stringify(goneFile)}, 'stopped'); process.exit(0); };
    const output = ${withHelper ? `require(${JSON.stringify(HELPER)}).onClosedOutput(stop)` : '{ closed: () => false }'};
    const report = (line) => { if (!output.closed()) process.stderr.write('[script] ' + line + '\\n'); };
    process.on('uncaughtException', (err) => report('failed: ' + err.message));
    setInterval(() => { process.stdout.write('tick\\n'); report('working'); }, 20);
  `;
}

async function runAndCloseOutput(withHelper: boolean, waitMs: number): Promise<{ exitCode: number | null; stopped: boolean }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-closed-output-'));
  const goneFile = path.join(dir, 'gone');
  const child = spawn(process.execPath, ['-e', script(withHelper, goneFile)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // the reader reads the first line, then goes away
  await new Promise((resolve) => child.stderr.once('data', resolve));
  child.stdout.destroy();
  child.stderr.destroy();
  let timer: NodeJS.Timeout | undefined;
  const exitCode = await Promise.race([exited, new Promise<'running'>((resolve) => (timer = setTimeout(() => resolve('running'), waitMs)))]);
  clearTimeout(timer);
  if (exitCode === 'running') {
    child.kill('SIGKILL');
    await exited;
  }
  const stopped = fs.existsSync(goneFile);
  fs.rmSync(dir, { recursive: true, force: true });
  return { exitCode: exitCode === 'running' ? null : exitCode, stopped };
}

describe('a script whose output has gone', () => {
  it('stops through its shutdown, once, and exits 0', async () => {
    expect(await runAndCloseOutput(true, 20_000)).toEqual({ exitCode: 0, stopped: true });
  });

  it('without it, keeps running (the failure this guards against)', async () => {
    expect(await runAndCloseOutput(false, 1_500)).toEqual({ exitCode: null, stopped: false });
  });

  it('still throws any other stream error', () => {
    const stream = new EventEmitter();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { onClosedOutput } = require(HELPER) as { onClosedOutput: (cb: () => void, streams: EventEmitter[]) => { closed: () => boolean } };
    const calls: string[] = [];
    const output = onClosedOutput(() => calls.push('gone'), [stream]);
    expect(() => stream.emit('error', Object.assign(new Error('bad fd'), { code: 'EBADF' }))).toThrow('bad fd');
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(calls).toEqual(['gone']);
    expect(output.closed()).toBe(true);
  });
});
