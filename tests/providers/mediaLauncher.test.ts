/**
 * providers/media/launcher.ts: ffmpeg and ffprobe are started by a small helper process, not forked from the worker.
 * What a caller sees is what a ChildProcess gives (output, exit code or signal, 'error' then 'close'), the helper is
 * the processes' parent, a helper that dies fails the runs it carried and is replaced, and nothing it started
 * outlives the process that asked for it.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { launchProcess, MediaLauncher, type LaunchedProcess } from '../../providers/media/launcher';
import { processAlive } from '../support/processes';

jest.setTimeout(30_000);

interface Outcome {
  stdout: string;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  errors: string[];
}

function outcome(child: LaunchedProcess): Promise<Outcome> {
  return new Promise((resolve) => {
    const result: Outcome = { stdout: '', stderr: '', code: null, signal: null, errors: [] };
    child.stdout.on('data', (chunk: Buffer) => (result.stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (result.stderr += chunk.toString('utf8')));
    child.on('error', (error) => result.errors.push(error.message));
    child.on('close', (code, signal) => resolve({ ...result, code, signal }));
  });
}

/** The first line a launched process prints, as soon as it is printed. */
function firstLine(child: LaunchedProcess): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolve(text.split('\n')[0]);
    });
  });
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('launchProcess', () => {
  it('relays the output and the exit code, all of the output before the close', async () => {
    const big = 300_000;
    const result = await outcome(launchProcess('sh', ['-c', `head -c ${big} /dev/zero | tr '\\0' x; echo oops >&2; exit 3`]));
    expect(result).toMatchObject({ code: 3, signal: null, errors: [], stderr: 'oops\n' });
    expect(result.stdout).toBe('x'.repeat(big));
  });

  it('starts the process from the helper, not from this process', async () => {
    const result = await outcome(launchProcess('sh', ['-c', 'echo $PPID']));
    const parent = Number(result.stdout.trim());
    expect(parent).toBeGreaterThan(0);
    expect(parent).not.toBe(process.pid);
  });

  it('starts it from this process with MEDIA_LAUNCHER=direct', async () => {
    process.env.MEDIA_LAUNCHER = 'direct';
    try {
      const result = await outcome(launchProcess('sh', ['-c', 'echo $PPID; exit 2']));
      expect(result).toMatchObject({ code: 2, stdout: `${process.pid}\n` });
    } finally {
      delete process.env.MEDIA_LAUNCHER;
    }
  });

  it('kills with the signal asked for', async () => {
    const child = launchProcess('sleep', ['30']);
    setTimeout(() => child.kill('SIGKILL'), 100);
    expect(await outcome(child)).toMatchObject({ code: null, signal: 'SIGKILL' });
  });

  it('says error, then close, for a program that is not there', async () => {
    const result = await outcome(launchProcess('/nonexistent/ffmpeg', []));
    expect(result.errors).toEqual([expect.stringContaining('ENOENT')]);
  });

  it('fails the runs of a helper that dies, and the next launch starts another', async () => {
    const running = launchProcess('sh', ['-c', 'echo $PPID; sleep 30']);
    const ended = outcome(running);
    const helper = Number(await firstLine(running));
    process.kill(helper, 'SIGKILL');
    expect((await ended).errors).toEqual([expect.stringContaining('media launcher exited')]);

    const next = await outcome(launchProcess('sh', ['-c', 'echo $PPID']));
    expect(next.code).toBe(0);
    expect(Number(next.stdout.trim())).not.toBe(helper);
  });

  it('kills what it started when the process that asked for it dies', async () => {
    // a process of its own launches a sleep through the helper, prints the sleep's pid, and is then killed
    const script = `
      const { launchProcess } = require(${JSON.stringify(path.resolve(__dirname, '../../providers/media/launcher'))});
      const child = launchProcess('sh', ['-c', 'echo $$; exec sleep 60']);
      child.stdout.on('data', (d) => process.stdout.write(d));
      child.on('error', () => {});`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const sleepPid = await new Promise<number>((resolve) => {
      let text = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('\n')) resolve(Number(text.split('\n')[0]));
      });
    });
    expect(processAlive(sleepPid)).toBe(true);
    parent.kill('SIGKILL');
    expect(await waitFor(() => !processAlive(sleepPid), 10_000)).toBe(true);
  });

  it('lets an idle helper go, keeps one that runs something, and starts another for the next launch', async () => {
    const launcher = new MediaLauncher({ idleMs: 200 });
    const first = await outcome(launcher.launch('sh', ['-c', 'echo $PPID']));
    const idleHelper = Number(first.stdout.trim());
    expect(await waitFor(() => !processAlive(idleHelper), 10_000)).toBe(true);

    // a run in flight keeps its helper past the idle time, however long it takes
    const running = launcher.launch('sh', ['-c', 'echo $PPID; exec sleep 30']);
    const ended = outcome(running);
    const busyHelper = Number(await firstLine(running));
    expect(busyHelper).not.toBe(idleHelper);
    await new Promise((r) => setTimeout(r, 600));
    expect(processAlive(busyHelper)).toBe(true);
    running.kill('SIGKILL');
    expect(await ended).toMatchObject({ signal: 'SIGKILL', errors: [] });
    expect(await waitFor(() => !processAlive(busyHelper), 10_000)).toBe(true);
  });
});
