import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  addDraftImages,
  dismissDraftJob,
  dispatchJobs,
  fetchDraft,
  retryDraftJob,
  removeDraftImage,
  restoreDraftVersion,
  uploadDraftFile,
  type DispatchRequest,
  type DraftDetail,
} from '../../api/enhanceSet';
import { apiErrorMessage, hasStatus } from '../../api/client';
import { jobEventsAtom, realtimeResyncAtom } from '../../atoms/realtime';
import { showToastAtom } from '../../atoms/toast';
import { runInBatches } from '../../upload/batching';
import { DRAFT_LIMITS, ENHANCE_MSG } from '../../../../domain/enhanceRenders';
import { dispatchToasts, startedImageIds } from './dispatchRules';
import { failedSince, runningJobIds, toWorkspaceImage, type WorkspaceImage } from './draftImages';
import { planDraftUpload } from './draftUploadRules';

/** Re-reads after a change: up to 6 reads, 3 s apart (001 sections 4 and 9). */
export const QUICK_POLL_READS = DRAFT_LIMITS.quickToolPolls;
export const QUICK_POLL_INTERVAL_MS = DRAFT_LIMITS.quickToolPollIntervalMs;
/** While a job still runs after the quick reads and no live note arrives, the draft is re-read this often. */
const SLOW_POLL_MS = 10_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface LocalUpload {
  id: string;
  name: string;
  objectUrl: string;
}

export interface DraftWorkspace {
  status: 'loading' | 'ready' | 'error' | 'locked';
  draft: DraftDetail | null;
  images: WorkspaceImage[];
  processing: ReadonlySet<string>;
  reverting: ReadonlySet<string>;
  uploading: boolean;
  reload: () => Promise<boolean>;
  upload: (files: File[]) => Promise<void>;
  remove: (image: WorkspaceImage) => Promise<void>;
  restore: (image: WorkspaceImage, versionUrl: string, options?: { reverting?: boolean }) => Promise<boolean>;
  dispatch: (request: Omit<DispatchRequest, 'draftId'>) => Promise<void>;
  /** Runs the image's failed job again (same model, prompt and references). */
  retry: (image: WorkspaceImage) => Promise<void>;
  /** Hides the image's failure notice for good. */
  dismissFailure: (image: WorkspaceImage) => Promise<void>;
}

/** A draft's server state and every action on it, with the spec's optimistic remove and re-reads after changes. */
export function useDraftWorkspace(draftId: string): DraftWorkspace {
  const toast = useSetAtom(showToastAtom);
  const jobEvents = useAtomValue(jobEventsAtom);
  const resync = useAtomValue(realtimeResyncAtom);
  const [status, setStatus] = useState<DraftWorkspace['status']>('loading');
  const [draft, setDraft] = useState<DraftDetail | null>(null);
  const [uploads, setUploads] = useState<LocalUpload[]>([]);
  // started by this page and not yet seen running by a read (the server's `job` says the rest)
  const [justStarted, setJustStarted] = useState<ReadonlySet<string>>(new Set());
  const [reverting, setReverting] = useState<ReadonlySet<string>>(new Set());
  const [uploading, setUploading] = useState(false);
  const processing = useMemo(() => {
    const running = runningJobIds(draft?.images ?? []);
    justStarted.forEach((id) => running.add(id));
    return running;
  }, [draft, justStarted]);
  const processingRef = useRef<ReadonlySet<string>>(processing);
  processingRef.current = processing;
  const alive = useRef(true);
  const pollSeq = useRef(0);

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      pollSeq.current++;
    };
  }, []);

  const read = useCallback(async (): Promise<DraftDetail | null> => {
    try {
      const next = await fetchDraft(draftId);
      if (!alive.current) return next;
      for (const failure of failedSince(processingRef.current, next.images)) {
        toast({ kind: 'error', message: `${failure.name}: ${failure.error ?? ENHANCE_MSG.jobFailed}` });
      }
      setDraft(next);
      setJustStarted(new Set());
      setStatus('ready');
      return next;
    } catch (error) {
      if (!alive.current) return null;
      if (hasStatus(error, 403)) setStatus('locked');
      else setStatus((current) => (current === 'loading' ? 'error' : current));
      return null;
    }
  }, [draftId, toast]);
  const reload = useCallback(async () => (await read()) !== null, [read]);

  /** The quick re-reads: up to 6, 3 s apart, stopping once a read succeeded and no job of this page still runs. */
  const pollQuickly = useCallback(async () => {
    const seq = ++pollSeq.current;
    for (let n = 0; n < QUICK_POLL_READS; n++) {
      await sleep(QUICK_POLL_INTERVAL_MS);
      if (seq !== pollSeq.current || !alive.current) return;
      const next = await read();
      if (next && runningJobIds(next.images).size === 0) return;
    }
  }, [read]);

  useEffect(() => {
    void reload();
  }, [reload]);

  // a live note about a draft job (or the stream coming back) re-reads the draft
  const lastJobEvents = useRef(jobEvents);
  useEffect(() => {
    const before = lastJobEvents.current;
    lastJobEvents.current = jobEvents;
    const changed = Object.values(jobEvents).some((event) => before[event.jobId] !== event && event.job === 'draft' && event.draftId === draftId);
    if (changed) void reload();
  }, [jobEvents, draftId, reload]);
  useEffect(() => {
    if (resync > 0) void reload();
  }, [resync, reload]);

  // a job still running once the quick reads are over: keep looking now and then
  useEffect(() => {
    if (processing.size === 0) return;
    const timer = window.setInterval(() => void reload(), SLOW_POLL_MS);
    return () => window.clearInterval(timer);
  }, [processing.size, reload]);

  // previews of uploads still in flight when the draft closes
  const uploadsRef = useRef(uploads);
  uploadsRef.current = uploads;
  useEffect(() => () => uploadsRef.current.forEach((u) => URL.revokeObjectURL(u.objectUrl)), []);

  const images = useMemo<WorkspaceImage[]>(() => {
    const saved = (draft?.images ?? []).map(toWorkspaceImage);
    const pending = uploads.map((u) => ({ id: u.id, name: u.name, displayUrl: u.objectUrl, currentUrl: '', previousUrl: null, history: [], uploading: true }));
    return [...saved, ...pending];
  }, [draft, uploads]);

  const upload = useCallback(
    async (files: File[]) => {
      const existing = (draft?.images.length ?? 0) + uploads.length;
      const plan = planDraftUpload(draft !== null, existing, files);
      if (!plan.ok) {
        toast({ kind: 'error', message: plan.error });
        return;
      }
      if (plan.notice) toast({ kind: 'info', message: plan.notice });
      const local = plan.files.map((file) => ({ id: `local-${crypto.randomUUID()}`, name: file.name, objectUrl: URL.createObjectURL(file) }));
      setUploads((current) => [...current, ...local]);
      setUploading(true);
      let failed = 0;
      let succeeded = 0;
      try {
        const results = await runInBatches(
          plan.files,
          // the file as it is (up to 150 MB): the models work on a copy the server makes
          async (file) => {
            const stored = await uploadDraftFile(draftId, file);
            return { name: file.name, ...stored };
          },
          { batchSize: DRAFT_LIMITS.parallelUploads, pauseMs: 0, sleep },
        );
        const stored = results.flatMap((r) => (r.ok ? [r.value] : []));
        failed = results.length - stored.length;
        if (stored.length > 0) {
          try {
            await addDraftImages(
              draftId,
              stored.map((s, i) => ({ source_type: 'uploaded', source_url: s.file_url, name: s.name, order_index: existing + i, metadata: { storage: s.storage } })),
            );
            succeeded = stored.length;
          } catch {
            failed += stored.length;
          }
        }
      } finally {
        if (succeeded > 0) toast({ kind: 'success', message: ENHANCE_MSG.uploaded(succeeded) });
        if (failed > 0) toast({ kind: 'error', message: ENHANCE_MSG.uploadFailed(failed) });
        await reload();
        local.forEach((u) => URL.revokeObjectURL(u.objectUrl));
        if (alive.current) {
          setUploads((current) => current.filter((u) => !local.some((l) => l.id === u.id)));
          setUploading(false);
        }
      }
    },
    [draft, uploads.length, draftId, toast, reload],
  );

  const remove = useCallback(
    async (image: WorkspaceImage) => {
      const before = draft;
      if (!before) return;
      // gone at once; put back if the server refuses
      setDraft({ ...before, images: before.images.filter((i) => i.id !== image.id) });
      try {
        await removeDraftImage(draftId, image.id, image.currentUrl);
      } catch {
        if (!alive.current) return;
        setDraft((current) => (current ? { ...current, images: [...current.images, ...before.images.filter((i) => i.id === image.id)].sort((a, b) => a.order_index - b.order_index) } : before));
        toast({ kind: 'error', message: `Could not remove ${image.name}` });
      }
    },
    [draft, draftId, toast],
  );

  const restore = useCallback(
    async (image: WorkspaceImage, versionUrl: string, options: { reverting?: boolean } = {}) => {
      if (options.reverting) setReverting((current) => new Set(current).add(image.id));
      try {
        await restoreDraftVersion(draftId, image.id, versionUrl);
        await reload();
        return true;
      } catch {
        toast({ kind: 'error', message: ENHANCE_MSG.restoreFailed });
        return false;
      } finally {
        if (options.reverting && alive.current) {
          setReverting((current) => {
            const next = new Set(current);
            next.delete(image.id);
            return next;
          });
        }
      }
    },
    [draftId, reload, toast],
  );

  const dispatch = useCallback(
    async (request: Omit<DispatchRequest, 'draftId'>) => {
      try {
        const reply = await dispatchJobs({ draftId, ...request });
        for (const t of dispatchToasts(reply)) toast(t);
        const started = startedImageIds(reply, request.imageIds);
        if (started.length > 0) setJustStarted((current) => new Set([...current, ...started]));
      } catch {
        toast({ kind: 'error', message: 'Failed to start jobs' });
        return;
      }
      await reload();
      void pollQuickly();
    },
    [draftId, toast, reload, pollQuickly],
  );

  const retry = useCallback(
    async (image: WorkspaceImage) => {
      if (!image.failure) return;
      try {
        const reply = await retryDraftJob(image.failure.jobId);
        for (const t of dispatchToasts(reply)) toast(t);
        if (startedImageIds(reply, [image.id]).length > 0) setJustStarted((current) => new Set([...current, image.id]));
      } catch (error) {
        toast({ kind: 'error', message: apiErrorMessage(error, 'Failed to start jobs') });
        return;
      }
      await reload();
      void pollQuickly();
    },
    [toast, reload, pollQuickly],
  );

  const dismissFailure = useCallback(
    async (image: WorkspaceImage) => {
      if (!image.failure) return;
      const jobId = image.failure.jobId;
      // gone at once; back if the server refuses
      setDraft((current) =>
        current ? { ...current, images: current.images.map((i) => (i.last_job && i.last_job.id === jobId ? { ...i, last_job: { ...i.last_job, dismissed: true } } : i)) } : current,
      );
      try {
        await dismissDraftJob(jobId);
      } catch {
        toast({ kind: 'error', message: `Could not dismiss the failure of ${image.name}` });
        await reload();
      }
    },
    [toast, reload],
  );

  return {
    retry,
    dismissFailure,
    status,
    draft,
    images,
    processing,
    reverting,
    uploading,
    reload,
    upload,
    remove,
    restore,
    dispatch,
  };
}
