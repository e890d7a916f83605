/**
 * A clean-up that runs once at start (unless `runAtStart` is false) and then every `everyMs` in this process, never two at once, on a timer that
 * does not keep the process alive. Stopping waits for a run under way. The resumable-upload and draft-upload sweeps
 * use it; what a run removes and how it is counted stay with its owner.
 */
import type { Logger } from '../../config/logger';

export interface PeriodicSweepOptions {
  everyMs: number;
  /** One run: resolves to how many things it removed. */
  run: () => Promise<number>;
  /** What a run removes, for the log line ("removed abandoned resumable uploads"). */
  what: string;
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** Whether start() runs it at once (default) or first after `everyMs`. */
  runAtStart?: boolean;
}

export class PeriodicSweep {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly options: PeriodicSweepOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.runOnce(), this.options.everyMs);
    this.timer.unref();
    if (this.options.runAtStart !== false) this.runOnce();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  private runOnce(): void {
    if (this.running) return;
    const { run, what, logger } = this.options;
    this.running = run()
      .then((removed) => void (removed && logger?.info({ removed }, `removed ${what}`)))
      .catch((err: unknown) => logger?.warn({ err }, `sweeping ${what} failed`))
      .finally(() => {
        this.running = null;
      });
  }
}
