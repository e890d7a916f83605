import { atom } from 'jotai';
import type { DeliveredEvent } from '../api/events';

export type JobEvent = Extract<DeliveredEvent, { kind: 'job' }>;

/** Whether the event stream is open: while it is not, views fall back to polling. */
export const realtimeConnectedAtom = atom(false);

/** The stream failed or was refused and is not back yet: the page says live updates are paused. */
export const realtimePausedAtom = atom(false);

/** Reconnects the stream at once (the paused notice's button); null while there is no subscription. */
export const realtimeRetryAtom = atom<{ run: () => void } | null>(null);

/** The latest event of each job, by job id (a running job's view follows its own). */
export const jobEventsAtom = atom<Record<string, JobEvent>>({});

export const recordJobEventAtom = atom(null, (_get, set, event: JobEvent) => {
  set(jobEventsAtom, (all) => ({ ...all, [event.jobId]: event }));
});

/** Bumped when the stream reopens after a failure: everything is re-read once, beyond what was replayed. */
export const realtimeResyncAtom = atom(0);
