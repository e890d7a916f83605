import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useRef, useState, type ReactElement } from 'react';
import { CREDIT_REFRESH_DELAY_MS, PLATFORM_ASPECT, type Platform, type VideoEffect } from '../../../../domain/constants';
import { MSG } from '../../../../domain/messages';
import { fetchApprovals } from '../../api/approvals';
import { apiErrorMessage } from '../../api/client';
import { announceContentRefresh, type ContentItem } from '../../api/projects';
import {
  cancelClip,
  fetchActiveClip,
  fetchCanCreateClip,
  fetchClipStatus,
  fetchClipTiming,
  retryClip,
  startClip,
  type CanCreateClip,
  type ClipJobView,
  type ClipTiming,
  type StartClipAnswer,
} from '../../api/videoGeneration';
import { refreshApprovalStatsAtom } from '../../atoms/approvals';
import { backToProjectAtom, clipLocationAtom, openApprovalsAtom, openBillingAtom } from '../../atoms/clipGeneration';
import { balanceKeyAtom, refreshCreditsAtom } from '../../atoms/credits';
import { jobEventsAtom, realtimeResyncAtom } from '../../atoms/realtime';
import { sessionAtom } from '../../atoms/session';
import { clipPresetAtom } from '../../atoms/tryIt';
import { Icon } from '../../components/Icon';
import { ProgressBar } from '../../components/ProgressBar';
import { PendingCapOverlay } from '../../components/PendingCapOverlay';
import { PendingCostNotice } from '../../components/PendingCostNotice';
import { LoadingState } from '../../components/Spinner';
import { useSourceItem } from '../../components/useSourceItem';
import { choicesWith, presetForSource } from '../../tryIt/clipPreset';
import { CLIP_COST, EFFECT_CHOICES, EFFECT_DESCRIPTIONS, PLATFORM_CHOICES, aspectLabel, clampProgress, clipOriginalPrompt, clipStatusPollMs, clipWaitText, creditNotice } from './clipChoices';
import { tilePicture } from '../ContentLibrary/libraryItems';
import './clipGeneration.css';

const FINAL: ReadonlyArray<ClipJobView['status']> = ['completed', 'failed', 'cancelled'];

function sizeText(bytes: unknown): string {
  return typeof bytes === 'number' && bytes > 0 ? `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB` : 'Size unknown';
}

/** Generate Clip (view `clip-generation`): source panel, effect, platform, summary, and the running job's progress. */
export function ClipGenerationView(): ReactElement {
  const { projectId, source } = useAtomValue(clipLocationAtom);
  const backToProject = useSetAtom(backToProjectAtom);
  const item = useSourceItem(projectId, source);

  return (
    <section className="view clip-view" aria-labelledby="clip-title">
      <button type="button" className="link-button back-link" onClick={() => backToProject(projectId)}>
        <Icon name="arrowLeft" size={18} /> Back to Project
      </button>
      <header className="view-header">
        <h1 id="clip-title">Generate Clip</h1>
      </header>
      {item === undefined && <LoadingState label="Loading content..." />}
      {item === null && (
        <div className="panel clip-empty" role="alert">
          <p>No content selected for video generation.</p>
          <button type="button" className="button button-primary" onClick={() => backToProject(projectId)}>
            Back to Project
          </button>
        </div>
      )}
      {item && projectId && <ClipGenerator projectId={projectId} item={item} />}
    </section>
  );
}

function ClipGenerator({ projectId, item }: { projectId: string; item: ContentItem }): ReactElement {
  const session = useAtomValue(sessionAtom);
  const refreshCredits = useSetAtom(refreshCreditsAtom);
  const refreshApprovalStats = useSetAtom(refreshApprovalStatsAtom);
  const backToProject = useSetAtom(backToProjectAtom);
  const openApprovals = useSetAtom(openApprovalsAtom);
  const openBilling = useSetAtom(openBillingAtom);

  // try-it entry: the welcome dialog presets the visitor's effect and platform for its render
  const preset = presetForSource(useAtomValue(clipPresetAtom), item.data.id);
  const [effect, setEffect] = useState<VideoEffect | null>(preset?.effect ?? null);
  const [platform, setPlatform] = useState<Platform | null>(preset?.platform ?? null);
  const [check, setCheck] = useState<CanCreateClip | null>(null);
  const [checkFailed, setCheckFailed] = useState(false);
  const [job, setJob] = useState<ClipJobView | null>(null);
  const [activeChecked, setActiveChecked] = useState(false);
  const [starting, setStarting] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [warning, setWarning] = useState<string | null>(null);
  const announced = useRef<string | null>(null);
  // who makes clips here decides the wait said before Generate (undefined while asked, null when unknown)
  const [timing, setTiming] = useState<ClipTiming | null | undefined>(undefined);

  useEffect(() => {
    let live = true;
    fetchClipTiming().then(
      (answer) => live && setTiming(answer),
      () => live && setTiming(null),
    );
    return () => {
      live = false;
    };
  }, []);

  const loadCheck = useCallback(() => {
    fetchCanCreateClip().then(
      (answer) => {
        setCheck(answer);
        setCheckFailed(false);
      },
      () => setCheckFailed(true),
    );
  }, []);

  // the credit rule and the user's running job (a reload, another tab or browser): the server is the source of truth
  useEffect(() => {
    loadCheck();
    let live = true;
    fetchActiveClip().then(
      (active) => {
        if (!live) return;
        if (active) setJob(active);
        setActiveChecked(true);
      },
      () => live && setActiveChecked(true),
    );
    return () => {
      live = false;
    };
  }, [loadCheck]);

  // the start rule again whenever the balance moves (a purchase, a teammate's charge or release): Generate follows it
  const balanceKey = useAtomValue(balanceKeyAtom);
  const firstBalance = useRef(true);
  useEffect(() => {
    if (balanceKey === null) return;
    // the first answer arrives with the page: the check above has just been read
    if (firstBalance.current) {
      firstBalance.current = false;
      return;
    }
    loadCheck();
  }, [balanceKey, loadCheck]);

  const running = job !== null && !FINAL.includes(job.status);
  const jobId = job?.id ?? null;
  const aspectRatio = job?.options.aspectRatio ?? null;
  const jobEvent = useAtomValue(jobEventsAtom)[jobId ?? ''];
  const resync = useAtomValue(realtimeResyncAtom);

  // re-reads the status call; the bar never moves back between two answers
  const readStatus = useCallback((id: string, isLive: () => boolean = () => true) => {
    fetchClipStatus(id).then(
      (next) =>
        isLive() &&
        setJob((current) =>
          current && current.id === next.id && !FINAL.includes(next.status) ? { ...next, progress: Math.max(next.progress, current.progress) } : next,
        ),
      () => undefined,
    );
  }, []);

  // the event stream carries progress; its end (or a status change) is read from the status call
  const jobRef = useRef(job);
  jobRef.current = job;
  useEffect(() => {
    const current = jobRef.current;
    if (!jobEvent || !current || current.id !== jobEvent.jobId || FINAL.includes(current.status)) return;
    if (jobEvent.status !== current.status) readStatus(current.id);
    const progress = jobEvent.progress;
    if (typeof progress === 'number') setJob((now) => (now && now.id === jobEvent.jobId && progress > now.progress ? { ...now, progress } : now));
  }, [jobEvent, readStatus]);

  // after the stream was down, once at once; and the spec's fallback polling while the job runs
  useEffect(() => {
    if (resync > 0 && running && jobId) readStatus(jobId);
  }, [resync, running, jobId, readStatus]);

  useEffect(() => {
    if (!running || !jobId || !aspectRatio) return;
    let live = true;
    const timer = window.setInterval(() => readStatus(jobId, () => live), clipStatusPollMs(aspectRatio));
    return () => {
      live = false;
      window.clearInterval(timer);
    };
  }, [running, jobId, aspectRatio, readStatus]);

  // when a job ends: credits after a short delay, the library and the approval count now
  useEffect(() => {
    if (!job || !FINAL.includes(job.status) || announced.current === job.id) return;
    announced.current = job.id;
    const timer = window.setTimeout(() => refreshCredits(), CREDIT_REFRESH_DELAY_MS);
    announceContentRefresh(job.projectId);
    refreshApprovalStats();
    loadCheck();
    return () => window.clearTimeout(timer);
  }, [job, refreshCredits, refreshApprovalStats, loadCheck]);

  async function afterStart(answer: StartClipAnswer): Promise<void> {
    setWarning(answer.warning ?? null);
    refreshCredits();
    // the job was admitted: its row exists, and the status call answers from the workflow from now on
    try {
      setJob(await fetchClipStatus(answer.jobId));
    } catch {
      setError('Your video is being generated, but its progress could not be read. It shows here again when you come back.');
    }
  }

  async function generate(): Promise<void> {
    if (!effect || !platform || !session?.user) return;
    setStarting(true);
    setError(null);
    setWarning(null);
    try {
      const answer = await startClip({
        projectId,
        userId: session.user.id,
        source: { kind: item.type === 'render' ? 'render' : 'image', id: item.data.id, fileUrl: item.data.file_url },
        effect,
        platform,
        aspectRatio: PLATFORM_ASPECT[platform],
        originalPrompt: clipOriginalPrompt(effect),
      });
      await afterStart(answer);
    } catch (err) {
      setError(apiErrorMessage(err, MSG.failedToStartVideo));
      loadCheck();
    } finally {
      setStarting(false);
    }
  }

  async function retry(): Promise<void> {
    if (!job) return;
    setStarting(true);
    setError(null);
    try {
      await afterStart(await retryClip(job.id));
    } catch (err) {
      setError(apiErrorMessage(err, MSG.failedToStartVideo));
    } finally {
      setStarting(false);
    }
  }

  async function cancel(): Promise<void> {
    if (!job) return;
    setCancelling(true);
    try {
      setJob(await cancelClip(job.id));
    } catch (err) {
      setError(apiErrorMessage(err, MSG.somethingWentWrong));
    } finally {
      setCancelling(false);
    }
  }

  const notice = check ? creditNotice(check) : null;
  const checking = (!check && !checkFailed) || !activeChecked;
  const blocked = running || checking || checkFailed || (notice !== null && notice.kind !== 'none');
  // a derived copy (or a small original), never an original of up to 150 MB
  const thumbnail = tilePicture(item);

  return (
    <div className="clip-layout">
      <aside className="panel clip-source" aria-label="Source image">
        <h2>Source image</h2>
        {thumbnail && <img src={thumbnail} alt={item.data.name} />}
        <p className="clip-source-name">{item.data.name}</p>
        <p className="muted">
          {[typeof item.data.width === 'number' && typeof item.data.height === 'number' ? `${item.data.width} × ${item.data.height}` : null, sizeText(item.data.file_size)]
            .filter(Boolean)
            .join(' · ')}
        </p>
      </aside>

      <div className="clip-steps">
        {checking && <LoadingState label="Checking credit availability..." />}
        {checkFailed && (
          <div className="form-error" role="alert">
            {MSG.unableToLoadCredits}
          </div>
        )}

        {notice?.kind === 'pending-cost' && !job && (
          <PendingCostNotice
            item="clip"
            cost={CLIP_COST}
            pendingCost={notice.pendingCost}
            available={notice.available}
            onReviewApprovals={() => openApprovals()}
            onAddCredits={() => openBilling()}
          />
        )}
        {notice?.kind === 'insufficient' && !job && (
          <div className="notice notice-amber" role="status">
            <p>
              Not enough credits for video generation. A clip needs {CLIP_COST} credits and you have {notice.available} available.
            </p>
            <div className="notice-actions">
              <button type="button" className="button button-secondary" onClick={() => openBilling()}>
                Add credits
              </button>
            </div>
          </div>
        )}
        {notice?.kind === 'cooldown' && !job && (
          <div className="form-error" role="alert">
            {MSG.rejectionStreakCooldown}
          </div>
        )}
        {warning && (
          <div className="notice notice-amber" role="status">
            <p>{warning}</p>
          </div>
        )}
        {error && (
          <div className="form-error" role="alert">
            {error}
          </div>
        )}

        {job && <JobPanel job={job} cancelling={cancelling} starting={starting} onCancel={() => void cancel()} onRetry={() => void retry()} onOpenApprovals={() => openApprovals()} onDismiss={() => setJob(null)} />}

        {/* the choices are for a new clip: while a job runs or its outcome is on screen, they stay out of the way */}
        {!job && (
          <>
            <fieldset className="clip-step">
              <legend>
                <span className="clip-step-number">1</span> Choose Video Effect
              </legend>
              <div className="clip-options">
                {choicesWith(EFFECT_CHOICES, preset?.effect).map((choice) => (
                  <label key={choice} className={`clip-option${effect === choice ? ' clip-option-selected' : ''}`}>
                    <input type="radio" name="clip-effect" value={choice} checked={effect === choice} onChange={() => setEffect(choice)} />
                    <span className="clip-option-title">{choice}</span>
                    <span className="clip-option-hint">{EFFECT_DESCRIPTIONS[choice]}</span>
                  </label>
                ))}
              </div>
            </fieldset>

            <fieldset className="clip-step">
              <legend>
                <span className="clip-step-number">2</span> Target Platform
              </legend>
              <div className="clip-options">
                {choicesWith(PLATFORM_CHOICES, preset?.platform).map((choice) => (
                  <label key={choice} className={`clip-option${platform === choice ? ' clip-option-selected' : ''}`}>
                    <input type="radio" name="clip-platform" value={choice} checked={platform === choice} onChange={() => setPlatform(choice)} />
                    <span className="clip-option-title">{choice}</span>
                    <span className="clip-option-hint">{aspectLabel(choice)}</span>
                  </label>
                ))}
              </div>
            </fieldset>

            <section className="clip-step" aria-labelledby="clip-step-3">
              <h2 id="clip-step-3" className="clip-step-title">
                <span className="clip-step-number">3</span> Generate Your Video
              </h2>
              <dl className="clip-summary" aria-label="Summary">
                <div>
                  <dt>Effect</dt>
                  <dd>{effect ?? 'Not chosen'}</dd>
                </div>
                <div>
                  <dt>Platform</dt>
                  <dd>{platform ?? 'Not chosen'}</dd>
                </div>
                <div>
                  <dt>Aspect ratio</dt>
                  <dd>{platform ? PLATFORM_ASPECT[platform] : '—'}</dd>
                </div>
              </dl>
              <p className="muted">
                Uses {CLIP_COST} creation credits, charged only when you approve the clip.{timing !== undefined && ` ${clipWaitText(timing)}`}
              </p>
              <button type="button" className="button button-primary button-large" disabled={!effect || !platform || blocked || starting} onClick={() => void generate()}>
                <Icon name="film" size={18} /> {starting ? 'Starting...' : 'Generate Video'}
              </button>
            </section>
          </>
        )}
      </div>

      {notice?.kind === 'pending-limit' && !job && (
        <PendingCapOverlay pendingCount={notice.pendingCount} limit={notice.limit} onOpenApprovals={() => openApprovals()} onBack={() => backToProject(projectId)} />
      )}
    </div>
  );
}

/** The finished clip's watermarked preview (the one waiting in Approvals), played muted; still when motion is reduced. */
function ClipResultPreview({ approvalId, fileName }: { approvalId: string; fileName: string }): ReactElement | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    fetchApprovals({ fresh: true }).then(
      (items) => {
        const found = items.find((candidate) => candidate.id === approvalId);
        if (live && found?.watermarked_file_url) setUrl(found.watermarked_file_url);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [approvalId]);
  if (!url) return null;
  const still = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  return <video className="clip-result-preview" src={url} controls muted loop playsInline autoPlay={!still} preload="metadata" aria-label={`Preview of ${fileName}`} />;
}

interface JobPanelProps {
  job: ClipJobView;
  cancelling: boolean;
  starting: boolean;
  onCancel: () => void;
  onRetry: () => void;
  onOpenApprovals: () => void;
  onDismiss: () => void;
}

function JobPanel({ job, cancelling, starting, onCancel, onRetry, onOpenApprovals, onDismiss }: JobPanelProps): ReactElement {
  const progress = clampProgress(job.progress);
  const summary = job.options?.effect ? `${job.options.effect} · ${job.options.platform} · ${job.options.aspectRatio}` : null;
  if (job.status === 'completed') {
    return (
      <div className="panel clip-job clip-job-done" role="status">
        <h2>Your clip is ready for approval</h2>
        {summary && <p className="muted">{summary}</p>}
        {job.result && <ClipResultPreview approvalId={job.result.approvalId} fileName={job.result.fileName} />}
        <ProgressBar className="clip-progress" label="Video generation progress" percent={100} done />
        <p>100% · The watermarked preview is in Approvals: approve it to save the clip to your project.</p>
        <div className="notice-actions">
          <button type="button" className="button button-primary" onClick={onOpenApprovals}>
            Open Approvals
          </button>
          <button type="button" className="button button-secondary" onClick={onDismiss}>
            Generate another
          </button>
        </div>
      </div>
    );
  }
  if (job.status === 'failed' || job.status === 'cancelled') {
    return (
      <div className="panel clip-job clip-job-ended" role="alert">
        <h2>{job.status === 'cancelled' ? 'Video generation cancelled' : 'Video generation failed'}</h2>
        {summary && <p className="muted">{summary}</p>}
        <p>{job.error ?? job.message}</p>
        <div className="notice-actions">
          <button type="button" className="button button-primary" disabled={starting} onClick={onRetry}>
            Retry
          </button>
          <button type="button" className="button button-secondary" onClick={onDismiss}>
            Choose again
          </button>
        </div>
      </div>
    );
  }
  return (
    <div className="panel clip-job" aria-live="polite">
      <p className="notice-info clip-wait">Please wait for current generation to complete</p>
      <h2>Generating your video</h2>
      {summary && <p className="muted">{summary}</p>}
      <ProgressBar className="clip-progress" label="Video generation progress" percent={progress} />
      <p className="clip-progress-text">
        <strong>{progress}%</strong> · {job.message}
      </p>
      <p className="muted">You can leave this page: the generation keeps running and shows here again when you come back.</p>
      <button type="button" className="button button-danger" disabled={cancelling} onClick={onCancel}>
        {cancelling ? 'Cancelling...' : 'Cancel'}
      </button>
    </div>
  );
}
