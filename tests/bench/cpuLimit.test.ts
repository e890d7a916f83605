/**
 * The capacity bench's per-worker CPU limit (bench/support/cpuLimit.ts): a process moved into its group is held to
 * its quota, and so are the children it starts afterwards (a worker's ffmpeg). Without root the limit is refused with
 * a message that says why, rather than the bench running unlimited.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { limitCpu } from '../../bench/support/cpuLimit';

const CLK_TCK = 100;
const BUSY_MS = 3000;

const isRoot = process.getuid?.() === 0;

(isRoot ? describe : describe.skip)('CPU limit for a bench process (root)', () => {
  test('a busy process and the busy child it starts stay within the quota together', async () => {
    // waits for a line on stdin, then spins and starts a spinning child, both for BUSY_MS of wall time; once the
    // child is reaped it prints its own CPU seconds and the child's (/proc/self/stat: utime stime cutime cstime)
    const script = `
      process.stdin.once('data', () => {
        const spin = 'const t = Date.now(); while (Date.now() - t < ${BUSY_MS}) {}';
        const child = require('node:child_process').spawn(process.execPath, ['-e', spin], { stdio: 'ignore' });
        eval(spin);
        child.on('exit', () => {
          const stat = require('node:fs').readFileSync('/proc/self/stat', 'utf8');
          const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
          process.stdout.write(String((f[11] + f[12] + f[13] + f[14]) / ${CLK_TCK}), () => process.exit(0));
        });
      });`;
    const proc = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const limit = limitCpu(proc.pid as number, 0.3, 'test');
    try {
      let out = '';
      proc.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      const started = Date.now();
      proc.stdin?.write('go\n');
      await exited;
      const wall = (Date.now() - started) / 1000;
      const used = Number(out);
      expect(used).toBeGreaterThan(0);
      // unlimited, two spinning processes would use about 2 x BUSY_MS of CPU on two cores; held to 0.3 CPU they
      // share 0.3 x the wall time (a period's rounding of slack)
      expect(used).toBeLessThan(0.3 * wall * 1.25 + 0.2);
      expect(limit.throttledSeconds()).toBeGreaterThan(0);
    } finally {
      proc.kill('SIGKILL');
      limit.release();
    }
    expect(fs.existsSync(limit.dir)).toBe(false);
  });

  test('a limit of no cores is refused', () => {
    expect(() => limitCpu(process.pid, 0, 'none')).toThrow('a CPU limit must be a positive number of cores, not 0');
  });
});

(isRoot ? describe.skip : describe)('CPU limit without root', () => {
  test('is refused with a message that names root', () => {
    expect(() => limitCpu(process.pid, 0.5, 'not-root')).toThrow(/root is needed|no cgroup cpu controller|none found/);
  });
});
