import { useSetAtom } from 'jotai';
import { useEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import { DRAFT_LIMITS, ENHANCE_MSG, modelInputMaxSide, workingCopyNote } from '../../../../domain/enhanceRenders';
import { enhancePromptWithVision, uploadDraftFile } from '../../api/enhanceSet';
import { showToastAtom } from '../../atoms/toast';
import { Icon } from '../../components/Icon';
import { LoadingState } from '../../components/Spinner';
import { ACCEPT_ATTRIBUTE } from '../../upload/fileChecks';
import { downloadFile } from '../ContentLibrary/download';
import { attachmentBlock, attachmentRoom, missingReference, referencesToSend } from './attachmentRules';
import { BetaNotice } from './BetaNotice';
import { runTargets } from './dispatchRules';
import { scopedSelection, type WorkspaceImage } from './draftImages';
import { debouncedSaver, emptyDraftState, loadDraftState, saveDraftState, type Attachment, type LocalDraftState } from './draftState';
import { DraftImageCard } from './DraftImageCard';
import { HistoryDialog } from './HistoryDialog';
import { enhancePromptLocally } from './localPromptEnhancer';
import { defaultModelFor, modelById, SYNC_MODEL_ID, type EnhanceMode } from './modelChoices';
import { PromptBar } from './PromptBar';
import { QuickStartDialog } from './QuickStartDialog';
import { useDraftWorkspace } from './useDraftWorkspace';

interface DraftWorkspaceViewProps {
  draftId: string;
  onBack: () => void;
  onLocked: () => void;
}

/** Inside a draft (001 section 2): top bar, image grid, upload area, history dialog and the bottom prompt bar. */
export function DraftWorkspaceView({ draftId, onBack, onLocked }: DraftWorkspaceViewProps): ReactElement {
  const workspace = useDraftWorkspace(draftId);
  const toast = useSetAtom(showToastAtom);
  const [local, setLocal] = useState<LocalDraftState>(() => loadDraftState(window.localStorage, draftId) ?? emptyDraftState(draftId, ''));
  const [mode, setMode] = useState<EnhanceMode>('edit_render');
  const [modelId, setModelId] = useState<string>(SYNC_MODEL_ID);
  const [syncOn, setSyncOn] = useState(false);
  const [pinnedId, setPinnedId] = useState<string | null>(null);
  const [historyOf, setHistoryOf] = useState<WorkspaceImage | null>(null);
  const [quickStart, setQuickStart] = useState(false);
  const [running, setRunning] = useState(false);
  const [enhancing, setEnhancing] = useState(false);
  const [attaching, setAttaching] = useState(false);
  // why the last Run did not start, said beside Run until the choices change
  const [runRefusal, setRunRefusal] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const [dragging, setDragging] = useState(false);
  const model = modelById(modelId);
  const { images, draft } = workspace;
  // the models work on a copy of at most this size: said near Run when an image of the draft is larger
  const reducesAnImage = images.some((image) => (image.longestSide ?? 0) > modelInputMaxSide(model));

  useEffect(() => {
    if (workspace.status === 'locked') onLocked();
  }, [workspace.status, onLocked]);

  // the local draft state is autosaved 800 ms after the last change, and saved at once when leaving
  const saver = useMemo(() => debouncedSaver<LocalDraftState>((state) => saveDraftState(window.localStorage, state)), []);
  useEffect(() => () => saver.flush(), [saver]);
  const firstSave = useRef(true);
  useEffect(() => {
    if (firstSave.current) {
      firstSave.current = false;
      return;
    }
    saver.schedule(local);
  }, [local, saver]);

  // keep the remembered images in step with the server's (name, current file) and drop selections of removed ones
  useEffect(() => {
    if (!draft) return;
    setLocal((current) => {
      const byId = new Map(current.images.map((i) => [i.id, i]));
      const next = draft.images.map((image) => {
        const before = byId.get(image.id);
        return { id: image.id, name: image.name, url: image.source_url, selected: before?.selected ?? false, showPrevious: before?.showPrevious ?? false, prompt: before?.prompt ?? '' };
      });
      const same = current.name === draft.name && next.length === current.images.length && next.every((n, i) => JSON.stringify(n) === JSON.stringify(current.images[i]));
      return same ? current : { ...current, name: draft.name, images: next };
    });
  }, [draft]);

  const selected = useMemo(() => new Set(local.images.filter((i) => i.selected && i.id !== pinnedId).map((i) => i.id)), [local.images, pinnedId]);
  const pinned = images.find((i) => i.id === pinnedId) ?? null;
  // Style Transfer without a reference cannot run: Run waits, and says why beside it
  const runBlock = missingReference(model, syncOn, local.attachments);
  useEffect(() => setRunRefusal(null), [selected, local.scope, modelId, syncOn, pinnedId]);

  function toggleSelect(id: string): void {
    setLocal((current) => ({ ...current, images: current.images.map((i) => (i.id === id ? { ...i, selected: !i.selected } : i)) }));
  }

  function changeMode(next: EnhanceMode): void {
    setMode(next);
    setModelId(defaultModelFor(next).id);
  }

  function syncImagesOn(): void {
    setSyncOn(true);
    // Sync Images runs on Nano Banana Edit
    setMode('edit_render');
    setModelId(SYNC_MODEL_ID);
  }

  function syncCancel(): void {
    setSyncOn(false);
    setPinnedId(null);
  }

  function pin(id: string): void {
    setPinnedId((current) => (current === id ? null : id));
    // a pinned image is the style, never a target
    setLocal((current) => ({ ...current, images: current.images.map((i) => (i.id === id ? { ...i, selected: false } : i)) }));
  }

  async function attach(files: File[]): Promise<void> {
    const room = attachmentRoom(model, syncOn, local.attachments.length, files.length);
    if (room.message) toast({ kind: 'error', message: room.message });
    if (room.take === 0) return;
    setAttaching(true);
    try {
      const added: Attachment[] = [];
      for (const file of files.slice(0, room.take)) {
        try {
          const stored = await uploadDraftFile(draftId, file, 'reference');
          added.push({ id: crypto.randomUUID(), type: 'reference', url: stored.url, name: file.name, useForLook: true, placements: [] });
        } catch {
          toast({ kind: 'error', message: ENHANCE_MSG.uploadFailed(1) });
        }
      }
      if (added.length > 0) setLocal((current) => ({ ...current, attachments: [...current.attachments, ...added], selectedAttachmentId: current.selectedAttachmentId ?? added[0].id }));
    } finally {
      setAttaching(false);
    }
  }

  async function enhance(): Promise<void> {
    const prompt = local.briefText.trim();
    if (!prompt) return;
    setEnhancing(true);
    const visionMode = syncOn ? 'style_sync' : 'attach';
    // Sync Images: the pinned image is the one reference; otherwise the attachments
    const referenceUrls = syncOn ? (pinned ? [pinned.currentUrl] : []) : referencesToSend(model, false, local.attachments);
    const targets = scopedSelection(local.scope, images.filter((i) => !i.uploading), selected, pinnedId);
    const imageUrls = images.filter((i) => targets.includes(i.id)).map((i) => i.currentUrl);
    let enhanced: string;
    try {
      enhanced = await enhancePromptWithVision({ mode: visionMode, prompt, imageUrls, referenceUrls });
    } catch {
      // the server's enhancer failed: the browser's own rules instead (001 section 7)
      enhanced = enhancePromptLocally({ mode: visionMode, prompt, referenceCount: referenceUrls.length, styleProfile: local.styleProfile });
    }
    setLocal((current) => ({ ...current, briefText: enhanced, enhancedBrief: enhanced }));
    setEnhancing(false);
  }

  async function run(): Promise<void> {
    if (runBlock) return;
    const targets = runTargets(scopedSelection(local.scope, images, selected, pinnedId));
    if (!targets.ok) {
      setRunRefusal(targets.message);
      return;
    }
    if (syncOn && !pinned) {
      setRunRefusal(ENHANCE_MSG.syncNeedsPinned);
      return;
    }
    setRunRefusal(null);
    setRunning(true);
    try {
      await workspace.dispatch({
        imageIds: targets.ids,
        prompt: model.promptEnabled ? local.briefText.trim() : '',
        modelId: model.id,
        mode: syncOn ? 'style_sync' : model.mode,
        references: referencesToSend(model, syncOn, local.attachments),
        syncImageId: syncOn ? pinnedId : null,
      });
    } finally {
      setRunning(false);
    }
  }

  async function download(image: WorkspaceImage): Promise<void> {
    try {
      await downloadFile(image.displayUrl, image.name);
    } catch {
      toast({ kind: 'error', message: 'Failed to download content' });
    }
  }

  function pickFiles(list: FileList | null): void {
    const files = list ? Array.from(list) : [];
    if (files.length > 0) void workspace.upload(files);
  }

  if (workspace.status === 'loading') return <LoadingState label="Opening draft..." />;
  if (workspace.status === 'error' || !draft) {
    return (
      <div className="panel error-panel" role="alert">
        <p>We couldn't open this draft.</p>
        <div className="form-actions">
          <button type="button" className="button button-ghost" onClick={onBack}>
            Back to Draft Projects
          </button>
          <button type="button" className="button button-primary" onClick={() => void workspace.reload()}>
            Retry
          </button>
        </div>
      </div>
    );
  }

  const full = images.length >= DRAFT_LIMITS.maxImagesPerDraft;

  return (
    <section className="view enhance-view draft-workspace" aria-labelledby="draft-title">
      <header className="draft-top-bar">
        <button type="button" className="button button-ghost" onClick={onBack}>
          <Icon name="arrowLeft" size={18} /> Back to Draft Projects
        </button>
        <h1 id="draft-title" className="draft-title">
          {draft.name}
        </h1>
        <div className="header-actions">
          <button type="button" className="button button-ghost" onClick={() => setQuickStart(true)}>
            Quick start
          </button>
          <button type="button" className="button button-secondary" disabled={workspace.uploading} onClick={() => fileInput.current?.click()}>
            <Icon name="upload" size={18} /> Upload more renders
          </button>
        </div>
      </header>
      <BetaNotice />

      {images.length > 0 && (
        <ul className="draft-grid" aria-label="Draft images">
          {images.map((image) => (
            <DraftImageCard
              key={image.id}
              image={image}
              selected={selected.has(image.id)}
              syncOn={syncOn}
              pinned={image.id === pinnedId}
              processing={workspace.processing.has(image.id)}
              reverting={workspace.reverting.has(image.id)}
              onToggleSelect={() => toggleSelect(image.id)}
              onPin={() => pin(image.id)}
              onHistory={() => setHistoryOf(image)}
              onDownload={() => void download(image)}
              onRedo={() => image.previousUrl && void workspace.restore(image, image.previousUrl, { reverting: true })}
              onRemove={() => {
                if (image.id === pinnedId) setPinnedId(null);
                void workspace.remove(image);
              }}
              onRetry={() => void workspace.retry(image)}
              onDismiss={() => void workspace.dismissFailure(image)}
            />
          ))}
        </ul>
      )}

      <div
        className={`draft-upload${dragging ? ' draft-upload-active' : ''}${full ? ' draft-upload-full' : ''}`}
        onDragEnter={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragOver={(e) => e.preventDefault()}
        onDragLeave={(e) => {
          if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
        }}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          pickFiles(e.dataTransfer.files);
        }}
      >
        <Icon name="upload" size={24} />
        <p className="draft-upload-title">{full ? 'This draft holds its 4 images' : 'Drop renders here'}</p>
        <p className="muted draft-upload-sub">
          Up to {DRAFT_LIMITS.maxImagesPerDraft} images per draft, {DRAFT_LIMITS.dropZoneMaxFiles} files at a time · JPEG, JPG, PNG, GIF, WEBP
        </p>
        <button type="button" className="button button-secondary" disabled={workspace.uploading} onClick={() => fileInput.current?.click()}>
          Choose files
        </button>
        <input
          ref={fileInput}
          type="file"
          multiple
          accept={ACCEPT_ATTRIBUTE}
          className="visually-hidden"
          tabIndex={-1}
          aria-label="Upload renders to this draft"
          onChange={(e) => {
            pickFiles(e.currentTarget.files);
            e.currentTarget.value = '';
          }}
        />
      </div>

      <PromptBar
        mode={mode}
        model={model}
        onModeChange={changeMode}
        onModelChange={setModelId}
        scope={local.scope}
        onScopeChange={(scope) => setLocal((current) => ({ ...current, scope }))}
        syncOn={syncOn}
        pinnedName={pinned?.name ?? null}
        onSyncOn={syncImagesOn}
        onSyncCancel={syncCancel}
        attachments={local.attachments}
        selectedAttachmentId={local.selectedAttachmentId}
        attachmentBlock={attachmentBlock(model, syncOn)}
        attachmentsBusy={attaching}
        onAttachFiles={(files) => void attach(files)}
        onSelectAttachment={(id) => setLocal((current) => ({ ...current, selectedAttachmentId: id }))}
        onToggleUseForLook={(id) => setLocal((current) => ({ ...current, attachments: current.attachments.map((a) => (a.id === id ? { ...a, useForLook: !a.useForLook } : a)) }))}
        onRemoveAttachment={(id) =>
          setLocal((current) => {
            const attachments = current.attachments.filter((a) => a.id !== id);
            return { ...current, attachments, selectedAttachmentId: current.selectedAttachmentId === id ? (attachments[0]?.id ?? null) : current.selectedAttachmentId };
          })
        }
        prompt={local.briefText}
        onPromptChange={(briefText) => setLocal((current) => ({ ...current, briefText }))}
        enhancing={enhancing}
        onEnhance={() => void enhance()}
        running={running}
        onRun={() => void run()}
        runBlock={runBlock}
        runRefusal={runRefusal}
        workingCopyNote={reducesAnImage ? workingCopyNote(model) : null}
      />

      {historyOf && (
        <HistoryDialog
          image={images.find((i) => i.id === historyOf.id) ?? historyOf}
          onClose={() => setHistoryOf(null)}
          onRestore={(url) => workspace.restore(historyOf, url)}
        />
      )}
      {quickStart && <QuickStartDialog onClose={() => setQuickStart(false)} />}
    </section>
  );
}
