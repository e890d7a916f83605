/**
 * A CPU limit for one benchmark process, as a container's `cpus:` or a pod's CPU limit gives it: the process is moved
 * into a cgroup of its own with a CFS quota of `cpus` cores (children it starts later, ffmpeg, stay in it). cgroup v2
 * (`cpu.max` under the unified hierarchy) when its cpu controller is enabled, else v1's cpu controller
 * (`cpu.cfs_quota_us`). Needs root; the bench says so rather than run unlimited.
 */
import fs from 'node:fs';
import path from 'node:path';

const PERIOD_US = 100_000;

export interface CpuLimit {
  /** the cgroup's own folder */
  dir: string;
  /** CPU seconds the group's processes were held back by the quota so far */
  throttledSeconds(): number;
  /** removes the group once its processes have exited (moves any left to the parent first) */
  release(): void;
}

function hierarchy(): { kind: 'v2' | 'v1'; root: string } {
  for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
    try {
      const controllers = fs.readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/);
      const enabled = fs.readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
      if (controllers.includes('cpu') && enabled.includes('cpu')) return { kind: 'v2', root };
    } catch {
      // not a v2 root
    }
  }
  if (fs.existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')) return { kind: 'v1', root: '/sys/fs/cgroup/cpu' };
  throw new Error('CPU limits need a cgroup cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us): none found');
}

export function limitCpu(pid: number, cpus: number, name: string): CpuLimit {
  if (!(cpus > 0)) throw new Error(`a CPU limit must be a positive number of cores, not ${cpus}`);
  const { kind, root } = hierarchy();
  const dir = path.join(root, `render-studio-bench-${name}-${process.pid}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    const quota = Math.round(cpus * PERIOD_US);
    if (kind === 'v2') {
      fs.writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
    } else {
      fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota));
    }
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
  } catch (err) {
    throw new Error(`could not limit process ${pid} to ${cpus} CPU in ${dir} (root is needed): ${(err as Error).message}`);
  }
  return {
    dir,
    throttledSeconds() {
      const stat = fs.readFileSync(path.join(dir, 'cpu.stat'), 'utf8');
      const v2 = /throttled_usec (\d+)/.exec(stat);
      if (v2) return Number(v2[1]) / 1e6;
      const v1 = /throttled_time (\d+)/.exec(stat);
      return v1 ? Number(v1[1]) / 1e9 : 0;
    },
    release() {
      try {
        const left = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
        for (const p of left) fs.writeFileSync(path.join(root, 'cgroup.procs'), p);
        fs.rmdirSync(dir);
      } catch {
        // already gone, or a process still leaving: the empty group is harmless
      }
    },
  };
}
