import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import type { User } from '../../api/auth';
import { apiErrorMessage, hasStatus } from '../../api/client';
import { fetchMusicTracks, type MusicTrackView } from '../../api/music';
import { currentWorkspaceAtom } from '../../atoms/workspace';
import {
  dryRunAssembly,
  fetchChatState,
  fetchAssemblyClips,
  fetchAssemblyJob,
  setProjectFormats,
  startAssembly,
  type AestheticChatState,
  type AssemblyClip,
  type AssemblyJobView,
} from '../../api/videoAssembly';
import { approvalStatsStateAtom, refreshApprovalsListAtom, requestApprovalStatsRefreshAtom } from '../../atoms/approvals';
import { refreshCreditsAtom } from '../../atoms/credits';
import { openProjectIdAtom, projectsStateAtom } from '../../atoms/project';
import { jobEventsAtom, realtimeResyncAtom } from '../../atoms/realtime';
import { openApprovalsFromAssemblyAtom } from '../../atoms/videoAssembly';
import { navigateAtom } from '../../atoms/view';
import { Icon } from '../../components/Icon';
import { ProgressBar } from '../../components/ProgressBar';
import { PendingCapOverlay } from '../../components/PendingCapOverlay';
import { LoadingState } from '../../components/Spinner';
import { ASSEMBLY_MESSAGES, ASSEMBLY_OUTPUTS, platformFormat, platformForOrientation, type AssemblyFormat } from '../../../../domain/assembly';
import type { Orientation } from '../../../../domain/orientation';
import { countedTowardsCap } from '../../../../domain/approvals';
import { durationText } from '../ContentLibrary/libraryItems';
import { AssemblyChat } from './AssemblyChat';
import { ClipPreviewDialog } from './ClipPreviewDialog';
import { DryRunTimeline } from './DryRunTimeline';
import { MusicPicker } from './MusicPicker';
import { BrandPartsPicker } from './BrandPartsPicker';
import { FormatPicker } from './FormatPicker';
import { fetchBrandKit } from '../../api/brandKit';
import { SelectedClipsPanel } from './SelectedClipsPanel';
import { modeFromSearch, type AssemblyMode } from './assemblyChat';
import { APPROVALS_REFRESH_AFTER_ASSEMBLY_MS, ASSEMBLY_MSG, ASSEMBLY_POLL_INTERVAL_MS, ASSEMBLY_POLL_MAX_ATTEMPTS, assemblyJobHeading, clampProgress, isFinalAssemblyStatus, jobKey } from './assemblyJob';
import { aspectForFamily, assembleBlocker, moveClip, orientationOf, restoreSelection, selectionFamily, toggleClip } from './clipSelection';
import { clipName } from './clipText';
import { parseSavedSelection, selectionKey, serializeSelection } from './selectionStorage';
import { timelineView, type ClipLookup, type TimelineView } from './timelineView';
import './videoAssembly.css';

const MODE_LABEL: Record<AssemblyMode, string> = { editor: 'AI editor', aesthetic: 'Aesthetic', selector: 'Clips only' };
const TAB_LABEL: Record<Orientation, string> = { landscape: 'Landscape', portrait: 'Portrait' };
const DRY_RUN_DEBOUNCE_MS = 300;

function outputText(family: Orientation): string {
  const output = ASSEMBLY_OUTPUTS[platformForOrientation(family)];
  return `${TAB_LABEL[family]} · ${output.platform === 'tiktok' ? 'TikTok' : 'YouTube'} ${output.width} × ${output.height} · Free`;
}

function readStorage(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeStorage(key: string, value: string | null): void {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch {
    // storage full or blocked: the selection simply is not kept
  }
}

function projectFromUrl(): string | null {
  const id = new URLSearchParams(window.location.search).get('project');
  return id && /^[0-9a-f-]{36}$/i.test(id) ? id : null;
}

function loadErrorText(err: unknown, fallback: string): string {
  return hasStatus(err, 401) ? ASSEMBLY_MSG.authRequired : fallback;
}

type ClipsState = { status: 'loading' } | { status: 'failed'; error: string } | { status: 'ready'; clips: AssemblyClip[] };
type DryRunState = { status: 'idle' } | { status: 'loading'; view: TimelineView | null } | { status: 'ready'; view: TimelineView } | { status: 'failed'; error: string };

/** Video Assembly (view `video-assembly`): choose up to 5 approved clips, order them, talk to the AI editor, preview the edit, assemble. */
export function VideoAssemblyView({ user }: { user: User }): ReactElement {
  const projects = useAtomValue(projectsStateAtom);
  const stats = useAtomValue(approvalStatsStateAtom);
  const openApprovals = useSetAtom(openApprovalsFromAssemblyAtom);
  const openProject = useSetAtom(openProjectIdAtom);
  const navigate = useSetAtom(navigateAtom);
  const refreshCredits = useSetAtom(refreshCreditsAtom);
  const requestStats = useSetAtom(requestApprovalStatsRefreshAtom);
  const refreshApprovalsList = useSetAtom(refreshApprovalsListAtom);
  const jobEvents = useAtomValue(jobEventsAtom);
  const resync = useAtomValue(realtimeResyncAtom);

  const [mode, setModeState] = useState<AssemblyMode>(() => modeFromSearch(window.location.search));
  const [clipsState, setClipsState] = useState<ClipsState>({ status: 'loading' });
  const [order, setOrder] = useState<string[]>([]);
  const [restored, setRestored] = useState(false);
  const [projectId, setProjectId] = useState<string | null>(() => projectFromUrl());
  const [tab, setTab] = useState<Orientation>('landscape');
  const [selectionError, setSelectionError] = useState<string | null>(null);
  const [assembleError, setAssembleError] = useState<string | null>(null);
  const [preview, setPreview] = useState<AssemblyClip | null>(null);
  const [chat, setChat] = useState<AestheticChatState | null>(null);
  // the music picker's answer, handed to the chat panel so both show the same editing config
  const [pickedState, setPickedState] = useState<AestheticChatState | null>(null);
  const [tracks, setTracks] = useState<MusicTrackView[] | null>(null);
  const workspaceId = useAtomValue(currentWorkspaceAtom)?.id ?? null;
  const [dryRun, setDryRun] = useState<DryRunState>({ status: 'idle' });
  const [job, setJob] = useState<AssemblyJobView | null>(null);
  const [starting, setStarting] = useState(false);
  const [pollsLeft, setPollsLeft] = useState(ASSEMBLY_POLL_MAX_ATTEMPTS);

  // ---------- clips ----------
  const loadClips = useCallback(() => {
    setClipsState({ status: 'loading' });
    fetchAssemblyClips().then(
      (clips) => setClipsState({ status: 'ready', clips }),
      (err: unknown) => setClipsState({ status: 'failed', error: loadErrorText(err, ASSEMBLY_MSG.failedToLoadClips) }),
    );
  }, []);
  useEffect(loadClips, [loadClips]);

  const clips = clipsState.status === 'ready' ? clipsState.clips : null;
  const byId = useMemo(() => new Map((clips ?? []).map((c) => [c.id, c])), [clips]);
  const families = useMemo(() => new Map((clips ?? []).map((c) => [c.id, orientationOf(c)])), [clips]);
  const familyOf = useCallback((id: string) => families.get(id), [families]);
  const family = selectionFamily(order, familyOf);
  // the formats to render: the project's (the picker's or the chat's choice, kept in its editing config), else the
  // platform's own; shown at once when picked, then saved
  const ownFormat = family ? platformFormat(platformForOrientation(family)) : null;
  const chatFormats = chat?.editing_config.formats ?? null;
  const chatFormatsKey = chatFormats ? chatFormats.join(',') : '';
  const [formats, setFormats] = useState<AssemblyFormat[]>([]);
  const [formatsError, setFormatsError] = useState<string | null>(null);
  useEffect(() => {
    setFormats(chatFormats ?? (ownFormat ? [ownFormat] : []));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the list's contents, not its identity
  }, [chatFormatsKey, ownFormat]);
  const chooseFormats = (next: AssemblyFormat[]): void => {
    setFormats(next);
    setFormatsError(null);
    if (!projectId || !projectKnown) return;
    setProjectFormats(projectId, next).then(
      (state) => {
        setChat(state);
        setPickedState(state);
      },
      (err: unknown) => setFormatsError(apiErrorMessage(err, 'The formats could not be saved. Please try again.')),
    );
  };
  const selectedClips = useMemo(() => order.map((id) => byId.get(id)).filter((c): c is AssemblyClip => c !== undefined), [order, byId]);

  // the saved selection comes back once the clips are known (dropping clips that are gone)
  useEffect(() => {
    if (!clips || restored) return;
    const saved = parseSavedSelection(readStorage(selectionKey(user.id)), Date.now());
    if (saved) {
      const next = restoreSelection(saved.order, families);
      setOrder(next);
      if (!projectFromUrl() && saved.projectId) setProjectId(saved.projectId);
      const first = next.length ? families.get(next[0]) : undefined;
      if (first) setTab(first);
    } else if (clips.length && ![...families.values()].includes('landscape')) {
      setTab('portrait');
    }
    setRestored(true);
  }, [clips, families, restored, user.id]);

  useEffect(() => {
    if (restored) writeStorage(selectionKey(user.id), serializeSelection(order, projectId, Date.now()));
  }, [order, projectId, restored, user.id]);

  function toggle(clip: AssemblyClip): void {
    const next = toggleClip(order, clip.id, familyOf);
    setSelectionError(next.error);
    setOrder(next.selected);
    setAssembleError(null);
  }

  function reorder(activeId: string, overId: string): void {
    setOrder((current) => moveClip(current, activeId, overId));
  }

  // ---------- music: the workspace's tracks, and (without the chat panel) the project's editing config ----------
  useEffect(() => {
    setTracks(null);
    if (!workspaceId) return;
    let live = true;
    fetchMusicTracks(workspaceId).then(
      (list) => live && setTracks(list),
      () => live && setTracks([]),
    );
    return () => {
      live = false;
    };
  }, [workspaceId]);
  // ---------- brand kit: whether the workspace has one (its parts are used by default) ----------
  const [kitStored, setKitStored] = useState<boolean | null>(null);
  useEffect(() => {
    setKitStored(null);
    if (!workspaceId) return;
    let live = true;
    fetchBrandKit(workspaceId).then(
      (kit) => live && setKitStored(kit.updatedAt !== null),
      () => live && setKitStored(false),
    );
    return () => {
      live = false;
    };
  }, [workspaceId]);
  const trackNames = useMemo(() => new Map((tracks ?? []).map((t) => [t.id, t.name])), [tracks]);

  // ---------- project ----------
  const projectList = projects?.ok ? projects.data : null;
  const projectKnown = projectId === null || projectList === null || projectList.some((p) => p.id === projectId);
  const ownershipError = projectKnown ? null : ASSEMBLY_MSG.projectPermission;

  // the chat panel reads the project's editing config; without it (selector mode) the music picker needs it read
  useEffect(() => {
    if (mode !== 'selector') return;
    setChat(null);
    if (!projectId || !projectKnown) return;
    let live = true;
    fetchChatState(projectId).then(
      (state) => live && setChat(state),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [mode, projectId, projectKnown]);

  // ---------- mode ----------
  function setMode(next: AssemblyMode): void {
    setModeState(next);
    const url = new URL(window.location.href);
    if (next === 'editor') url.searchParams.delete('mode');
    else url.searchParams.set('mode', next);
    window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  }

  // ---------- dry run: the edit the assembly would run, re-read when the clips, their order, the project or the chat's config change ----------
  const configKey = chat ? JSON.stringify(chat.editing_config) : '';
  const orderKey = order.join(',');
  useEffect(() => {
    if (!projectId || !projectKnown || order.length === 0 || !family) {
      setDryRun({ status: 'idle' });
      return;
    }
    const controller = new AbortController();
    setDryRun((current) => ({ status: 'loading', view: current.status === 'ready' ? current.view : current.status === 'loading' ? current.view : null }));
    const timer = window.setTimeout(() => {
      const lookup: ClipLookup = {
        byId: new Map(selectedClips.map((c) => [c.id, clipName(c)])),
        byFile: new Map(selectedClips.map((c) => [c.file_url, clipName(c)] as const)),
      };
      dryRunAssembly({ projectId, clipIds: order, aspectRatio: aspectForFamily(family) }, controller.signal).then(
        (answer) => {
          const view = timelineView(answer, lookup);
          setDryRun(view ? { status: 'ready', view } : { status: 'failed', error: ASSEMBLY_MSG.failedToLoadPreview });
        },
        (err: unknown) => {
          if (controller.signal.aborted) return;
          const message = hasStatus(err, 401) ? ASSEMBLY_MSG.authRequired : hasStatus(err, 403) ? apiErrorMessage(err, ASSEMBLY_MSG.failedToLoadPreview) : ASSEMBLY_MSG.failedToLoadPreview;
          setDryRun({ status: 'failed', error: message });
        },
      );
    }, DRY_RUN_DEBOUNCE_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
    // selectedClips follows order; the key strings stand for the arrays
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [projectId, projectKnown, orderKey, family, configKey]);

  // ---------- the job ----------
  const jobId = job?.jobId ?? null;
  const running = job !== null && !isFinalAssemblyStatus(job.status);

  const readJob = useCallback((id: string) => {
    fetchAssemblyJob(id).then(
      (next) => setJob((current) => (current && current.jobId === next.jobId && !isFinalAssemblyStatus(next.status) ? { ...next, progress: Math.max(current.progress, next.progress) } : next)),
      () => undefined,
    );
  }, []);

  // a job started before a reload is followed again
  useEffect(() => {
    const stored = readStorage(jobKey(user.id));
    if (!stored) return;
    fetchAssemblyJob(stored).then(
      (found) => {
        if (isFinalAssemblyStatus(found.status)) writeStorage(jobKey(user.id), null);
        else setJob(found);
      },
      () => writeStorage(jobKey(user.id), null),
    );
  }, [user.id]);

  // the spec's polling: every 6 s, at most 30 times
  useEffect(() => {
    if (!running || !jobId) return;
    let left = ASSEMBLY_POLL_MAX_ATTEMPTS;
    setPollsLeft(left);
    const timer = window.setInterval(() => {
      left -= 1;
      setPollsLeft(left);
      readJob(jobId);
      if (left <= 0) window.clearInterval(timer);
    }, ASSEMBLY_POLL_INTERVAL_MS);
    return () => window.clearInterval(timer);
  }, [running, jobId, readJob]);

  // the live channel, where the server reports on it: progress at once, a status change re-read
  const jobEvent = jobId ? jobEvents[jobId] : undefined;
  const jobRef = useRef(job);
  jobRef.current = job;
  useEffect(() => {
    const current = jobRef.current;
    if (!jobEvent || !current || isFinalAssemblyStatus(current.status)) return;
    if (jobEvent.status !== current.status) readJob(current.jobId);
    const progress = jobEvent.progress;
    if (typeof progress === 'number') setJob((now) => (now && progress > now.progress ? { ...now, progress } : now));
  }, [jobEvent, readJob]);
  useEffect(() => {
    if (resync > 0 && running && jobId) readJob(jobId);
  }, [resync, running, jobId, readJob]);

  // completed: the video waits in Approvals
  useEffect(() => {
    if (!job || !isFinalAssemblyStatus(job.status)) return;
    writeStorage(jobKey(user.id), null);
    requestStats();
    if (job.status === 'completed') {
      // stored at once: the view is left right away, before an effect would save the cleared selection
      writeStorage(selectionKey(user.id), serializeSelection([], projectId, Date.now()));
      setOrder([]);
      setSelectionError(null);
      refreshApprovalsList({ force: true });
      openApprovals();
    }
  }, [job, user.id, projectId, requestStats, refreshApprovalsList, openApprovals]);

  async function assemble(): Promise<void> {
    const blocker = assembleBlocker(order, projectId) ?? ownershipError;
    if (blocker) {
      setAssembleError(blocker);
      return;
    }
    if (!projectId || !family) return;
    setStarting(true);
    setAssembleError(null);
    try {
      const id = await startAssembly({ projectId, platform: platformForOrientation(family), clips: selectedClips, formats });
      writeStorage(jobKey(user.id), id);
      const platform = platformForOrientation(family);
      setJob({ jobId: id, status: 'pending', progress: 0, message: ASSEMBLY_MESSAGES.queued, error: null, projectId, platform, clipIds: order, result: null, createdAt: new Date().toISOString() });
      refreshCredits();
      requestStats();
      window.setTimeout(() => refreshApprovalsList({ force: true }), APPROVALS_REFRESH_AFTER_ASSEMBLY_MS);
      readJob(id);
    } catch (err) {
      setAssembleError(hasStatus(err, 401) ? ASSEMBLY_MSG.authRequired : hasStatus(err, 403) || hasStatus(err, 400) || hasStatus(err, 409) ? apiErrorMessage(err, ASSEMBLY_MSG.failedToStart) : ASSEMBLY_MSG.failedToStart);
    } finally {
      setStarting(false);
    }
  }

  // ---------- pending cap ----------
  const statsData = stats?.ok ? stats.data : null;
  const atCap = statsData !== null && statsData.limit > 0 && countedTowardsCap(statsData) >= statsData.limit && !running;

  const tabClips = (clips ?? []).filter((c) => families.get(c.id) === tab);
  const counts = { landscape: 0, portrait: 0 };
  for (const f of families.values()) counts[f] += 1;

  return (
    <section className="view assembly-view" aria-labelledby="assembly-title">
      <header className="view-header assembly-header">
        <div>
          <h1 id="assembly-title">Video Assembly</h1>
          <p className="muted">Join up to 5 approved clips into one social video. Assemblies are free.</p>
        </div>
        <div className="tabs assembly-modes" role="group" aria-label="Mode">
          {(['editor', 'aesthetic', 'selector'] as const).map((m) => (
            <button key={m} type="button" className="tab" aria-pressed={mode === m} onClick={() => setMode(m)}>
              {MODE_LABEL[m]}
            </button>
          ))}
        </div>
      </header>

      <div className="assembly-layout">
        <div className="assembly-main">
          <section className="panel assembly-clips" aria-labelledby="assembly-clips-title">
            <header className="assembly-panel-head">
              <h2 id="assembly-clips-title">Your clips</h2>
              {family && <span className="pill">{TAB_LABEL[family]} selection</span>}
            </header>
            <div className="tabs" role="tablist" aria-label="Clip orientation">
              {(['landscape', 'portrait'] as const).map((t) => (
                <button key={t} type="button" role="tab" className="tab" aria-selected={tab === t} aria-controls="assembly-clip-grid" onClick={() => setTab(t)}>
                  {TAB_LABEL[t]} ({counts[t]})
                </button>
              ))}
            </div>
            {selectionError && (
              <div className="form-error" role="alert">
                {selectionError}
              </div>
            )}
            {/* the tabs' panel is always there, whatever it holds (loading, an error, the empty state or the clips) */}
            <div id="assembly-clip-grid" className="assembly-clip-panel" role="tabpanel" aria-label={`${TAB_LABEL[tab]} clips`}>
              {clipsState.status === 'loading' && <LoadingState label="Loading clips..." />}
              {clipsState.status === 'failed' && (
                <div className="panel error-panel" role="alert">
                  <p>{clipsState.error}</p>
                  <button type="button" className="button button-primary" onClick={loadClips}>
                    Retry
                  </button>
                </div>
              )}
              {clips && tabClips.length === 0 && (
                <div className="empty-state">
                  <span className="empty-icon">
                    <Icon name="film" size={28} />
                  </span>
                  <h2>No {tab} clips yet</h2>
                  <p>Clips you approve are listed here. Generate clips from a project's renders.</p>
                </div>
              )}
              {clips && tabClips.length > 0 && (
                <ul className="assembly-clip-grid" aria-label={`${TAB_LABEL[tab]} clips`}>
                  {tabClips.map((clip) => {
                    const position = order.indexOf(clip.id);
                    const selected = position >= 0;
                    const name = clipName(clip);
                    return (
                      <li key={clip.id} className={`assembly-clip${selected ? ' assembly-clip-selected' : ''}`}>
                        <button type="button" className="assembly-clip-select" aria-pressed={selected} onClick={() => toggle(clip)}>
                          <span className={`assembly-clip-thumb assembly-clip-thumb-${tab}`}>
                            {clip.thumbnail_url ? <img src={clip.thumbnail_url} alt="" loading="lazy" /> : <Icon name="film" size={24} />}
                          </span>
                          <span className="assembly-clip-name">
                            <span className="visually-hidden">Select </span>
                            {name}
                          </span>
                          <span className="assembly-clip-meta muted">
                            {clip.project_name}
                            {clip.duration !== null ? ` · ${durationText(clip.duration)}` : ''}
                            {clip.aspect_ratio ? ` · ${clip.aspect_ratio}` : ''}
                          </span>
                        </button>
                        {selected && (
                          <span className="assembly-clip-order" aria-hidden="true">
                            {position + 1}
                          </span>
                        )}
                        <button type="button" className="icon-button assembly-clip-preview" aria-label={`Preview ${name}`} onClick={() => setPreview(clip)}>
                          <Icon name="play" size={18} />
                        </button>
                      </li>
                    );
                  })}
                </ul>
              )}
            </div>
          </section>

          <section className="panel assembly-timeline" aria-labelledby="assembly-timeline-title">
            <header className="assembly-panel-head">
              <h2 id="assembly-timeline-title">Edit preview</h2>
              {dryRun.status === 'loading' && <span className="muted">Updating...</span>}
            </header>
            {dryRun.status === 'idle' && <p className="muted">Select clips and a project to see the timeline the assembly will render.</p>}
            {dryRun.status === 'failed' && (
              <div className="form-error" role="alert">
                {dryRun.error}
              </div>
            )}
            {(dryRun.status === 'ready' || (dryRun.status === 'loading' && dryRun.view)) && <DryRunTimeline view={dryRun.status === 'ready' ? dryRun.view : (dryRun.view as TimelineView)} />}
            {dryRun.status === 'loading' && !dryRun.view && <LoadingState label="Preparing the edit..." />}
          </section>
        </div>

        <aside className="assembly-side" aria-label="Assembly">
          <SelectedClipsPanel
            clips={selectedClips}
            onReorder={reorder}
            onRemove={(id) => {
              setOrder((current) => current.filter((c) => c !== id));
              setSelectionError(null);
            }}
            onClear={() => {
              setOrder([]);
              setSelectionError(null);
            }}
            onPreview={setPreview}
          />

          <section className="panel assembly-commit" aria-labelledby="assembly-commit-title">
            <h2 id="assembly-commit-title">Assemble</h2>
            <div className="field">
              <label htmlFor="assembly-project">Save to project</label>
              <select id="assembly-project" value={projectId ?? ''} onChange={(e) => setProjectId(e.target.value || null)}>
                <option value="">Choose a project</option>
                {projectId && !projectKnown && <option value={projectId}>Unknown project</option>}
                {(projectList ?? []).map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            </div>
            {ownershipError && (
              <div className="form-error" role="alert">
                {ownershipError}
              </div>
            )}
            <p className="muted">
              {family ? outputText(family) : 'The first clip you select sets the orientation.'}
            </p>
            {family && <FormatPicker formats={formats} own={ownFormat} disabled={starting || running} onChange={chooseFormats} />}
            {formatsError && (
              <div className="form-error" role="alert">
                {formatsError}
              </div>
            )}
            {assembleError && (
              <div className="form-error" role="alert">
                {assembleError}
              </div>
            )}
            {job && <JobPanel job={job} pollsLeft={pollsLeft} onOpenApprovals={() => openApprovals()} onDismiss={() => setJob(null)} />}
            {!running && (
              <button type="button" className="button button-primary button-large button-block" disabled={starting || atCap} onClick={() => void assemble()}>
                <Icon name="film" size={18} /> {starting ? 'Starting...' : 'Assemble Video'}
              </button>
            )}
          </section>

          <MusicPicker
            projectId={projectKnown ? projectId : null}
            tracks={tracks}
            music={chat?.editing_config.music ?? null}
            onState={(next) => {
              setChat(next);
              setPickedState(next);
            }}
            onOpenMusic={() => navigate({ view: 'music', params: { mode: null } })}
          />

          <BrandPartsPicker
            projectId={projectKnown ? projectId : null}
            kitStored={kitStored}
            parts={chat?.editing_config.brand ?? null}
            onState={(next) => {
              setChat(next);
              setPickedState(next);
            }}
            onOpenBrandKit={() => navigate({ view: 'brand-kit', params: { mode: null } })}
          />

          {mode !== 'selector' && (
            <AssemblyChat
              external={pickedState}
              trackNames={trackNames}
              mode={mode}
              projectId={projectKnown ? projectId : null}
              selectedClips={selectedClips}
              aspectRatio={family ? aspectForFamily(family) : null}
              onState={setChat}
              onApplyOrder={(next) => setOrder(next)}
            />
          )}
        </aside>

        {atCap && statsData && (
          <PendingCapOverlay
            pendingCount={countedTowardsCap(statsData)}
            limit={statsData.limit}
            backLabel={projectId ? 'Back to Project' : 'Back to Projects'}
            onOpenApprovals={() => openApprovals()}
            onBack={() => {
              const back = projectId && projectKnown ? projectId : null;
              navigate({ view: 'projects', params: { project: back, mode: null } });
              openProject(back);
            }}
          />
        )}
      </div>

      {preview && <ClipPreviewDialog clip={preview} orientation={TAB_LABEL[families.get(preview.id) ?? 'landscape']} onClose={() => setPreview(null)} />}
    </section>
  );
}

function JobPanel({ job, pollsLeft, onOpenApprovals, onDismiss }: { job: AssemblyJobView; pollsLeft: number; onOpenApprovals: () => void; onDismiss: () => void }): ReactElement {
  const progress = clampProgress(job.progress);
  if (job.status === 'failed' || job.status === 'cancelled') {
    return (
      <div className="assembly-job assembly-job-ended" role="alert">
        <h3>{job.status === 'cancelled' ? 'Assembly cancelled' : 'Assembly failed'}</h3>
        <p>{job.error ?? job.message}</p>
        <button type="button" className="button button-secondary" onClick={onDismiss}>
          Dismiss
        </button>
      </div>
    );
  }
  return (
    <div className="assembly-job" aria-live="polite">
      <h3>{assemblyJobHeading(job)}</h3>
      <ProgressBar className="assembly-progress" label="Assembly progress" percent={job.status === 'completed' ? 100 : progress} />
      <p className="assembly-job-text">
        <strong>{job.status === 'completed' ? 100 : progress}%</strong> · {job.message}
      </p>
      {pollsLeft <= 0 && job.status !== 'completed' && (
        <div className="notice notice-amber" role="status">
          <p>This is taking longer than usual. The video appears in Approvals when it is ready.</p>
          <div className="notice-actions">
            <button type="button" className="button button-secondary" onClick={onOpenApprovals}>
              Open Approvals
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
