/**
 * Starts ffmpeg and ffprobe. Forking copies the parent's page tables and waits for the child's exec, and a worker
 * holds ~1 GB (its workflow threads, the bundle, the cache): each spawn from it blocked the worker's event loop for
 * 37 ms on a quiet machine and 70 ms on a busy one, twice per clip, during which no activity or workflow task moved
 * (the capacity bench's profile: a sixth of the main thread's time). So a small helper process
 * (launcherHelper.cjs, started on first use) does the forking and relays the output; a process launched through it
 * looks like a ChildProcess to its caller (stdout, stderr, kill, 'error', 'close').
 *
 * MEDIA_LAUNCHER=direct spawns from this process instead. If the helper dies, the runs in flight fail with an error
 * (their activities retry) and the next launch starts a new helper. A helper left idle for a minute is let go (the
 * next launch starts another): a process that loads this module many times over, as a jest worker does once per test
 * file, otherwise kept one idle helper per load until it exited.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';

export interface LaunchedProcess extends EventEmitter {
  readonly stdout: Readable;
  readonly stderr: Readable;
  kill(signal?: NodeJS.Signals): void;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

type HelperMessage =
  | { type: 'stdout' | 'stderr'; id: number; data: Buffer | Uint8Array }
  | { type: 'error'; id: number; message: string; code?: string }
  | { type: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

class RelayedProcess extends EventEmitter implements LaunchedProcess {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private closed = false;

  constructor(private readonly onKill: (signal: NodeJS.Signals) => void) {
    super();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.closed) this.onKill(signal);
  }

  deliver(message: HelperMessage): void {
    if (this.closed) return;
    switch (message.type) {
      case 'stdout':
      case 'stderr':
        this[message.type].write(Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength));
        break;
      case 'error':
        this.emit('error', Object.assign(new Error(message.message), { code: message.code }));
        break;
      case 'close':
        this.finish(message.code, message.signal);
        break;
    }
  }

  /** Ends the output streams, then says 'close' (as a ChildProcess does, after its stdio). */
  finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closed) return;
    this.closed = true;
    let open = 2;
    const done = () => {
      open -= 1;
      if (open === 0) this.emit('close', code, signal);
    };
    for (const stream of [this.stdout, this.stderr]) {
      // a stream nobody reads still has to end: flowing mode drains it
      if (stream.listenerCount('data') === 0) stream.resume();
      stream.once('end', done);
      stream.end();
    }
  }
}

/** How long a helper with nothing to run is kept before it is let go. */
const IDLE_MS = 60_000;

export class MediaLauncher {
  private helper: ChildProcess | null = null;
  private readonly running = new Map<number, RelayedProcess>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: { idleMs?: number } = {}) {}

  launch(file: string, args: string[]): LaunchedProcess {
    const helper = this.ensureHelper();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const id = this.nextId++;
    const relayed = new RelayedProcess((signal) => {
      if (helper.connected) helper.send({ type: 'kill', id, signal });
    });
    this.running.set(id, relayed);
    relayed.once('close', () => {
      this.running.delete(id);
      // an idle helper keeps no process alive; one with runs in flight does, as their own children would
      if (this.running.size === 0) {
        this.unref(helper);
        this.releaseWhenIdle(helper);
      }
    });
    this.ref(helper);
    helper.send({ type: 'spawn', id, file, args });
    return relayed;
  }

  private ensureHelper(): ChildProcess {
    if (this.helper && this.helper.connected) return this.helper;
    const helper = fork(path.join(__dirname, 'launcherHelper.cjs'), [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    helper.on('message', (message: HelperMessage) => this.running.get(message.id)?.deliver(message));
    helper.on('error', () => this.lose(helper, 'the media launcher failed'));
    helper.on('exit', (code, signal) => this.lose(helper, `the media launcher exited (${code ?? signal})`));
    this.unref(helper);
    this.helper = helper;
    return helper;
  }

  /** Lets the helper go after it has stayed idle for `idleMs`: it exits when its channel closes. */
  private releaseWhenIdle(helper: ChildProcess): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.helper !== helper || this.running.size > 0) return;
      this.helper = null;
      if (helper.connected) helper.disconnect();
    }, this.options.idleMs ?? IDLE_MS);
    this.idleTimer.unref();
  }

  /** The helper is gone: every run it carried fails, and the next launch starts another. */
  private lose(helper: ChildProcess, reason: string): void {
    if (this.helper !== helper) return;
    this.helper = null;
    for (const relayed of [...this.running.values()]) {
      relayed.emit('error', new Error(reason));
      relayed.finish(null, null);
    }
    this.running.clear();
  }

  private ref(helper: ChildProcess): void {
    helper.ref();
    (helper.channel as { ref?: () => void } | undefined)?.ref?.();
  }

  private unref(helper: ChildProcess): void {
    helper.unref();
    (helper.channel as { unref?: () => void } | undefined)?.unref?.();
  }
}

let shared: MediaLauncher | null = null;

/** Starts `file` with `args`, stdin ignored, stdout and stderr piped: through the helper, or directly. */
export function launchProcess(file: string, args: string[]): LaunchedProcess {
  if (process.env.MEDIA_LAUNCHER === 'direct') return spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] }) as ChildProcess & LaunchedProcess;
  shared ??= new MediaLauncher();
  return shared.launch(file, args);
}
