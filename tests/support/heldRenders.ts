/**
 * A video provider for an in-process test worker whose `wait` renders for real and then holds the finished render,
 * before the clip's activity stores it, until the test releases it or the waiting activity is cancelled. A test that
 * needs a clip still in its render step when something else happens (a cancellation, an account deletion) waits until
 * its render is held, instead of counting on an encode that outlasts the other thing.
 *
 * A cancelled wait (its signal aborted: the activity's cancellation, or the worker's shutdown) ends as the provider's
 * own wait ends when stopped, with ABORTED; the activity then reports the cancellation. Everything but `wait` goes to
 * the wrapped provider as it is.
 */
import { ProviderError } from '../../providers/errors';
import type { ImageToVideoProvider, VideoResult, VideoWaitOptions } from '../../providers/types';

export interface HeldRenders {
  provider: ImageToVideoProvider;
  /** Provider job ids whose render has finished and is held now. */
  readonly held: ReadonlySet<string>;
  /** Lets the held wait of `jobId` return its clip. */
  release(jobId: string): void;
}

export function holdRenders(inner: ImageToVideoProvider): HeldRenders {
  const held = new Set<string>();
  const releases = new Map<string, () => void>();

  async function wait(jobId: string, options: VideoWaitOptions = {}): Promise<VideoResult> {
    const result = await inner.wait(jobId, options);
    const { signal } = options;
    held.add(jobId);
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new ProviderError('ABORTED', `Stopped waiting for ${jobId}`));
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        releases.set(jobId, () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    } finally {
      held.delete(jobId);
      releases.delete(jobId);
    }
    return result;
  }

  const provider: ImageToVideoProvider = {
    ...(inner.pollIntervalMs !== undefined ? { pollIntervalMs: inner.pollIntervalMs } : {}),
    ...(inner.maxWaitMs !== undefined ? { maxWaitMs: inner.maxWaitMs } : {}),
    submit: (request) => inner.submit(request),
    status: (jobId) => inner.status(jobId),
    wait,
    cancel: (jobId) => inner.cancel(jobId),
    release: (jobId) => inner.release(jobId),
  };
  return { provider, held, release: (jobId) => releases.get(jobId)?.() };
}
