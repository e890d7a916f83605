import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useRef, useState, type ReactElement } from 'react';
import { MSG } from '../../../../domain/messages';
import { apiErrorMessage } from '../../api/client';
import { cancelJob, fetchJobs, retryJob, type ActivityJob, type ActivityJobKind, type ActivityJobList } from '../../api/jobs';
import { refreshCreditsAtom } from '../../atoms/credits';
import { jobsAllUsersAtom, jobsVersionAtom, refreshJobsAtom } from '../../atoms/jobs';
import { currentUserAtom } from '../../atoms/session';
import { currentWorkspaceAtom, workspaceAllowsAtom } from '../../atoms/workspace';
import { showToastAtom } from '../../atoms/toast';
import { Dialog } from '../../components/Dialog';
import { ProgressBar } from '../../components/ProgressBar';
import { LoadingState } from '../../components/Spinner';
import './activity.css';
import { countText, pluralWord } from '../../components/countText';

/** While anything runs the list is read again this often. */
const RUNNING_REFRESH_MS = 3000;

type ListState = { status: 'loading' } | { status: 'done'; list: ActivityJobList } | { status: 'error'; message: string };

type PendingAction = { action: 'cancel' | 'retry'; job: ActivityJob };

/** "You" for the signed-in user, else the member's name (or e-mail); 'deleted account' when the account is gone. */
export function starterText(startedBy: ActivityJob['startedBy'] | undefined, userId: string | undefined): string | null {
  if (startedBy === undefined) return null;
  if (startedBy === null) return 'deleted account';
  if (startedBy.userId === userId) return 'You';
  return startedBy.name.trim() || startedBy.email;
}

const KIND_LABEL: Record<ActivityJobKind, string> = { clip: 'Video clip', 'image-edit': 'AI image', export: 'Data export', assembly: 'Assembled video', draft: 'Enhance Renders' };
const STATE_LABEL: Record<ActivityJob['state'], string> = {
  pending: 'queued',
  processing: 'running',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

const STARTED_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function isRunning(job: ActivityJob): boolean {
  return job.state === 'pending' || job.state === 'processing';
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function costText(job: ActivityJob): string {
  if (job.cost === 0) return 'Free';
  const credits = `${job.cost} credit${job.cost === 1 ? '' : 's'}`;
  if (job.state === 'failed' || job.state === 'cancelled') return `${credits}, given back`;
  if (isRunning(job)) return `${credits} reserved`;
  return `${credits} on approval`;
}

/**
 * Activity: the user's running and recent jobs (clips, AI images, data exports) with their state and progress;
 * cancel a running clip, retry a failed or cancelled one. Admins may list every user's jobs, each with a link to
 * its run in the Temporal UI and, for jobs started with tracing on, its trace id (linked to the trace viewer).
 */
export function ActivityView({ isAdmin }: { isAdmin: boolean }): ReactElement {
  const [allUsers, setAllUsers] = useAtom(jobsAllUsersAtom);
  const version = useAtomValue(jobsVersionAtom);
  const refreshJobs = useSetAtom(refreshJobsAtom);
  const refreshCredits = useSetAtom(refreshCreditsAtom);
  const showToast = useSetAtom(showToastAtom);
  const [state, setState] = useState<ListState>({ status: 'loading' });
  const [pending, setPending] = useState<PendingAction | null>(null);
  const [busy, setBusy] = useState(false);
  const readSeq = useRef(0);
  const showAll = isAdmin && allUsers;
  const workspace = useAtomValue(currentWorkspaceAtom);
  const userId = useAtomValue(currentUserAtom)?.id;
  // who started each job matters once others work here too; alone, the list stays as it always was
  const shared = !!workspace && (!workspace.personal || (workspace.memberCount ?? 1) > 1);
  // cancel and retry start or stop work: not a viewer's (the server refuses them anyway)
  const canAct = useAtomValue(workspaceAllowsAtom)('generate');

  const load = useCallback(async () => {
    const seq = ++readSeq.current;
    try {
      const list = await fetchJobs(showAll);
      if (seq === readSeq.current) setState({ status: 'done', list });
    } catch (error) {
      if (seq === readSeq.current) setState({ status: 'error', message: apiErrorMessage(error, MSG.somethingWentWrong) });
    }
  }, [showAll]);

  useEffect(() => {
    void load();
  }, [load, version]);

  const anyRunning = state.status === 'done' && state.list.jobs.some(isRunning);
  useEffect(() => {
    if (!anyRunning) return;
    const timer = window.setInterval(() => void load(), RUNNING_REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [anyRunning, load]);

  async function confirm(): Promise<void> {
    if (!pending) return;
    setBusy(true);
    try {
      if (pending.action === 'cancel') {
        await cancelJob(pending.job.kind, pending.job.id);
        showToast({ kind: 'success', message: 'Cancelled. Its credits are available again.' });
      } else {
        const retried = await retryJob(pending.job.kind, pending.job.id);
        showToast({ kind: retried.warning ? 'info' : 'success', message: retried.warning ?? 'Started again.' });
      }
      setPending(null);
    } catch (error) {
      showToast({ kind: 'error', message: apiErrorMessage(error, MSG.somethingWentWrong) });
      setPending(null);
    } finally {
      setBusy(false);
      refreshCredits();
      refreshJobs();
    }
  }

  return (
    <section className="view activity-view" aria-labelledby="activity-title">
      <header className="view-header">
        <h1 id="activity-title">Activity</h1>
        {isAdmin && (
          <label className="activity-toggle">
            <input
              type="checkbox"
              checked={allUsers}
              onChange={(event) => {
                setState({ status: 'loading' });
                setAllUsers(event.target.checked);
              }}
            />
            <span>All users</span>
          </label>
        )}
      </header>
      <p className="muted activity-lede">
        {showAll
          ? "Every user's running and recent jobs, newest first."
          : shared
            ? `The running and recent jobs of ${workspace?.name ?? 'this workspace'}, newest first.`
            : 'Your running and recent jobs, newest first.'}
      </p>

      {state.status === 'loading' && <LoadingState label="Loading activity..." />}
      {state.status === 'error' && (
        <div className="panel activity-message" role="alert">
          <p>{state.message}</p>
          <button type="button" className="button button-secondary" onClick={() => void load()}>
            Try again
          </button>
        </div>
      )}
      {state.status === 'done' && state.list.jobs.length === 0 && (
        <div className="empty-state">
          <h2>No activity yet</h2>
          <p>Clips, AI images, Enhance Renders runs and data exports you start show up here while they run and afterwards.</p>
        </div>
      )}
      {state.status === 'done' && state.list.jobs.length > 0 && (
        <ul className="activity-list" aria-label="Jobs">
          {state.list.jobs.map((job) => (
            <JobCard
              key={`${job.kind}:${job.id}`}
              job={job}
              showOwner={state.list.all}
              starter={shared ? starterText(job.startedBy, userId) : null}
              onAction={canAct ? (action) => setPending({ action, job }) : null}
            />
          ))}
        </ul>
      )}

      {pending && (
        <Dialog title={pending.action === 'cancel' ? 'Cancel this job?' : 'Retry this job?'} onClose={() => !busy && setPending(null)}>
          <p>
            {pending.action === 'cancel'
              ? `${pending.job.item} stops now and its ${countText(pending.job.cost, 'reserved credit')} ${pluralWord(pending.job.cost, 'is', 'are')} released.`
              : `${pending.job.item} starts again with the same settings and reserves ${countText(pending.job.cost, 'credit')}.`}
          </p>
          <div className="form-actions">
            <button type="button" className="button button-ghost" onClick={() => setPending(null)} disabled={busy}>
              Keep it
            </button>
            <button type="button" className={`button ${pending.action === 'cancel' ? 'button-danger' : 'button-primary'}`} onClick={() => void confirm()} disabled={busy}>
              {pending.action === 'cancel' ? (busy ? 'Cancelling...' : 'Cancel job') : busy ? 'Starting...' : 'Retry job'}
            </button>
          </div>
        </Dialog>
      )}
    </section>
  );
}

/**
 * Admins only (the API sends trace ids to site admins alone): the job's OpenTelemetry trace, linked to the trace viewer
 * when one is configured (TRACE_VIEWER_URL), else with a hint where to look it up.
 */
function TraceFact({ traceId, traceUrl }: { traceId: string; traceUrl?: string }): ReactElement {
  return (
    <div className="activity-trace">
      <dt>Trace</dt>
      <dd>
        {traceUrl ? (
          <a href={traceUrl} target="_blank" rel="noreferrer" title="Open this job's trace in the trace viewer">
            <code>{traceId}</code>
            <span className="visually-hidden"> (opens the trace viewer)</span>
          </a>
        ) : (
          <>
            <code>{traceId}</code>
            <span className="activity-trace-hint">Look this id up in your trace viewer (docs: Operations, Traces).</span>
          </>
        )}
      </dd>
    </div>
  );
}

function JobCard({
  job,
  showOwner,
  starter,
  onAction,
}: {
  job: ActivityJob;
  showOwner: boolean;
  /** who started it, in a shared workspace */
  starter: string | null;
  /** null for a role that may not cancel or retry */
  onAction: ((action: 'cancel' | 'retry') => void) | null;
}): ReactElement {
  const running = isRunning(job);
  return (
    <li className="panel activity-job" data-state={job.state} aria-label={`${KIND_LABEL[job.kind]}: ${job.item}`}>
      <div className="activity-job-head">
        <span className="activity-kind">{KIND_LABEL[job.kind]}</span>
        <span className={`activity-badge activity-badge-${job.state}`}>{STATE_LABEL[job.state]}</span>
      </div>
      <p className="activity-item">{job.item}</p>
      {running && (
        <div className="activity-progress">
          <ProgressBar label="Progress" percent={job.progress} thin />
          <span className="activity-progress-text">
            {job.progress}%{job.message ? ` · ${job.message}` : ''}
          </span>
        </div>
      )}
      {job.state === 'failed' && job.error && <p className="activity-error">{job.error}</p>}
      <dl className="activity-facts">
        {showOwner && job.userEmail && (
          <div>
            <dt>User</dt>
            <dd>{job.userEmail}</dd>
          </div>
        )}
        {starter && (
          <div>
            <dt>Started by</dt>
            <dd>{starter}</dd>
          </div>
        )}
        <div>
          <dt>{job.kind === 'draft' ? 'Draft' : 'Project'}</dt>
          <dd>{job.projectName ?? '—'}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <time dateTime={job.startedAt}>{STARTED_FORMAT.format(new Date(job.startedAt))}</time>
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(job.durationMs)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{costText(job)}</dd>
        </div>
        {job.traceId && <TraceFact traceId={job.traceId} traceUrl={job.traceUrl} />}
      </dl>
      {((onAction && (job.canCancel || job.canRetry)) || job.temporalUrl) && (
        <div className="activity-actions">
          {job.temporalUrl && (
            <a className="button button-ghost activity-temporal" href={job.temporalUrl} target="_blank" rel="noreferrer">
              Open in Temporal UI<span className="visually-hidden"> (run {job.workflowId})</span>
            </a>
          )}
          {onAction && job.canRetry && (
            <button type="button" className="button button-secondary" onClick={() => onAction('retry')}>
              Retry
            </button>
          )}
          {onAction && job.canCancel && (
            <button type="button" className="button button-danger" onClick={() => onAction('cancel')}>
              Cancel
            </button>
          )}
        </div>
      )}
    </li>
  );
}
