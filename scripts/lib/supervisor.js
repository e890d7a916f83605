'use strict';
/**
 * Keeps `npm start`'s long-running children (the API, the worker) up. A child that dies is restarted after a
 * backoff that doubles with each crash inside the crash-loop window (1 s, 2 s, 4 s ...); one that dies
 * `crashLoopCount` times within `crashLoopWindowMs` is reported with its last output lines and left down
 * ('crash-loop' event: the caller decides whether the rest can go on). `stop()` asks every child to finish
 * (SIGTERM: the API lets requests finish, the worker drains its tasks) and kills what is left after
 * `stopTimeoutMs`.
 *
 * Each child runs in a process group of its own: when it dies, whatever it started (ffmpeg) is killed with it,
 * as on a crashed host, and a terminal's Ctrl-C reaches only the supervisor, which stops things in order.
 */
const { spawn } = require('node:child_process');
const { EventEmitter } = require('node:events');

const DEFAULTS = {
  initialBackoffMs: 1000,
  maxBackoffMs: 30000,
  crashLoopCount: 5,
  crashLoopWindowMs: 60000,
  stopTimeoutMs: 10000,
  /** output lines kept per child for a crash-loop report */
  keepLines: 20,
};

function describeExit(code, signal) {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

class Supervisor extends EventEmitter {
  /**
   * @param {object} [options] see DEFAULTS; plus `report(line)` for the supervisor's own lines and
   *   `output(name, stream, line)` for the children's (default: prefixed with [name] on stdout / stderr)
   */
  constructor(options = {}) {
    super();
    this.options = { ...DEFAULTS, ...options };
    this.report = options.report ?? ((line) => process.stderr.write(`[start] ${line}\n`));
    this.output = options.output ?? ((name, stream, line) => (stream === 'stderr' ? process.stderr : process.stdout).write(`[${name}] ${line}\n`));
    this.entries = new Map();
    this.stopping = false;
  }

  /** Starts `command args` as the child `name` and keeps it up. */
  add(name, { command, args = [], env = process.env, cwd = process.cwd() }) {
    if (this.entries.has(name)) throw new Error(`${name} is supervised already`);
    const entry = { name, command, args, env, cwd, child: null, startedAt: 0, crashes: [], restarts: 0, lines: [], timer: null, state: 'starting', stopped: null };
    this.entries.set(name, entry);
    this.spawnEntry(entry);
    return this;
  }

  /** The pid of the running child `name`, or null while it is down. */
  pid(name) {
    return this.entries.get(name)?.child?.pid ?? null;
  }

  /** running | restarting | crash-looping | stopped, per child */
  states() {
    return Object.fromEntries([...this.entries.values()].map((e) => [e.name, e.state]));
  }

  spawnEntry(entry) {
    const child = spawn(entry.command, entry.args, { cwd: entry.cwd, env: entry.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    entry.child = child;
    entry.startedAt = Date.now();
    entry.state = 'running';
    for (const stream of ['stdout', 'stderr']) {
      let buffered = '';
      child[stream].on('data', (chunk) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop();
        for (const line of lines) {
          entry.lines.push(line);
          if (entry.lines.length > this.options.keepLines) entry.lines.shift();
          this.output(entry.name, stream, line);
        }
      });
    }
    let settled = false;
    const settle = (code, signal) => {
      if (settled) return;
      settled = true;
      this.onExit(entry, code, signal);
    };
    child.once('error', (err) => {
      entry.lines.push(`could not start ${entry.command}: ${err.message}`);
      // a spawn failure may come without 'exit'
      if (!child.pid) settle(null, null);
    });
    child.once('exit', (code, signal) => {
      // whatever the child started dies with it (a SIGKILLed worker leaves its ffmpeg behind otherwise)
      if (child.pid) killGroup(child.pid, 'SIGKILL');
      // its last lines are read by 'close'; something that escaped the group may hold the pipes, so do not wait long
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        settle(code, signal);
      }, 2000).unref();
    });
    child.once('close', (code, signal) => settle(code, signal));
    this.emit('spawn', { name: entry.name, pid: child.pid, restarts: entry.restarts });
  }

  onExit(entry, code, signal) {
    if (entry.child === null) return;
    entry.child = null;
    const how = describeExit(code, signal);
    if (this.stopping) {
      entry.state = 'stopped';
      this.emit('exit', { name: entry.name, code, signal });
      entry.stopped?.();
      return;
    }
    const now = Date.now();
    const { crashLoopCount, crashLoopWindowMs, initialBackoffMs, maxBackoffMs } = this.options;
    entry.crashes = entry.crashes.filter((at) => now - at < crashLoopWindowMs);
    entry.crashes.push(now);
    const uptime = ((now - entry.startedAt) / 1000).toFixed(1);
    const window = `${Math.round(crashLoopWindowMs / 1000)}s`;
    if (entry.crashes.length >= crashLoopCount) {
      entry.state = 'crash-looping';
      const output = entry.lines.length ? entry.lines.map((l) => `    ${l}`).join('\n') : '    (no output)';
      this.report(
        `${entry.name} is crash-looping: it stopped ${entry.crashes.length} times within ${window} (last time it ${how} after ${uptime}s), so it is not restarted again. Its last output:\n${output}`,
      );
      this.emit('crash-loop', { name: entry.name, crashes: entry.crashes.length, code, signal, lines: [...entry.lines] });
      return;
    }
    const delay = Math.min(maxBackoffMs, initialBackoffMs * 2 ** (entry.crashes.length - 1));
    entry.state = 'restarting';
    this.report(`${entry.name} ${how} after ${uptime}s; restarting it in ${delay / 1000}s (crash ${entry.crashes.length} of ${crashLoopCount} allowed within ${window})`);
    this.emit('crash', { name: entry.name, code, signal, delayMs: delay, crashes: entry.crashes.length });
    entry.timer = setTimeout(() => {
      entry.timer = null;
      if (this.stopping) return;
      entry.restarts += 1;
      this.spawnEntry(entry);
      this.report(`${entry.name} restarted (pid ${entry.child.pid}, restart ${entry.restarts})`);
      this.emit('restart', { name: entry.name, pid: entry.child.pid, restarts: entry.restarts });
    }, delay);
  }

  /** SIGTERM to every child, SIGKILL to the process groups of those still up after stopTimeoutMs. No restarts after this. */
  stop() {
    this.stopping = true;
    return Promise.all(
      [...this.entries.values()].map((entry) => {
        if (entry.timer) clearTimeout(entry.timer);
        entry.timer = null;
        const child = entry.child;
        if (!child) {
          entry.state = 'stopped';
          return Promise.resolve();
        }
        return new Promise((resolve) => {
          const kill = setTimeout(() => {
            this.report(`${entry.name} did not stop within ${this.options.stopTimeoutMs / 1000}s; killing it`);
            killGroup(child.pid, 'SIGKILL');
          }, this.options.stopTimeoutMs);
          entry.stopped = () => {
            clearTimeout(kill);
            resolve();
          };
          child.kill('SIGTERM');
        });
      }),
    ).then(() => undefined);
  }
}

module.exports = { Supervisor, DEFAULTS };
