import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useId, useRef, useState, type FormEvent, type ReactElement } from 'react';
import { IMAGE_EDIT_DEFAULTS, IMAGE_PROMPT_MAX_LENGTH, imageEditOutcomeNote, sourceReductionNote, type ImageEditFormat } from '../../../../domain/imageEdit';
import { CREDIT_COST, PENDING_LIMIT_DEFAULT } from '../../../../domain/constants';
import type { CanCreateContentResult } from '../../../../domain/creditMath';
import { countedTowardsCap } from '../../../../domain/approvals';
import { MSG } from '../../../../domain/messages';
import { announceApprovalsChanged } from '../../api/approvals';
import { isApiHttpError } from '../../api/client';
import { fetchCanCreate } from '../../api/credits';
import { generateImageEdit, type ImageEditResponse } from '../../api/imageEdit';
import type { ContentItem } from '../../api/projects';
import { approvalStatsStateAtom, refreshApprovalStatsAtom, refreshApprovalsListAtom } from '../../atoms/approvals';
import { openBillingAtom } from '../../atoms/clipGeneration';
import { balanceKeyAtom, refreshCreditsAtom } from '../../atoms/credits';
import { currentUserAtom } from '../../atoms/session';
import { imageEditorLocationAtom, leaveImageEditorAtom } from '../../atoms/imageGeneration';
import { Icon } from '../../components/Icon';
import { PendingCapOverlay } from '../../components/PendingCapOverlay';
import { PendingCostNotice } from '../../components/PendingCostNotice';
import { LoadingState } from '../../components/Spinner';
import { useSourceItem } from '../../components/useSourceItem';
import { dialogPicture } from '../ContentLibrary/libraryItems';
import { initialFormat } from './formatChoice';
import './imageEditor.css';

/** The screen moves on to Approvals this long after a result was sent for approval (000 section 2). */
export const TO_APPROVALS_DELAY_MS = 800;

const FORMATS: { value: ImageEditFormat; label: string }[] = [
  { value: 'square', label: 'Square (1:1)' },
  { value: 'landscape', label: 'Landscape (16:9)' },
  { value: 'portrait', label: 'Portrait (9:16)' },
  { value: 'original', label: 'Keep original framing' },
];

/** '2.45 MB', or 'Size unknown' when the item carries no size. */
export function sizeLabel(bytes: unknown): string {
  return typeof bytes === 'number' && bytes > 0 ? `${(bytes / (1024 * 1024)).toFixed(2)} MB` : 'Size unknown';
}

/** The text for a refused or failed generation: the server's own words, with the spec's mapping for credits. */
function failureText(error: unknown): string {
  if (!isApiHttpError(error)) return MSG.somethingWentWrong;
  // the screen's own rule (000 section 5), whatever words a proxy or an expired session's answer carries
  if (error.status === 401) return MSG.loginToGenerate;
  if (error.code === 'INSUFFICIENT_CREDITS' || /insufficient credits/i.test(error.apiMessage)) return MSG.insufficientCreditsImage;
  return error.apiMessage || MSG.somethingWentWrong;
}

type Phase = { kind: 'idle' } | { kind: 'generating' } | { kind: 'sent'; answer: ImageEditResponse } | { kind: 'failed'; message: string };

/**
 * Enhanced AI Editor (view `image-generation`, 000 section 2): describe a transformation of a render or AI image,
 * generate a preview, and the result waits in Approvals. Reached from an item of the Content Library.
 */
export function EnhancedEditorView(): ReactElement {
  const { projectId, source } = useAtomValue(imageEditorLocationAtom);
  const leave = useSetAtom(leaveImageEditorAtom);
  const item = useSourceItem(projectId, source);

  if (item === undefined) {
    return (
      <section className="view image-editor" aria-labelledby="image-editor-title">
        <h1 id="image-editor-title">Enhanced AI Editor</h1>
        <LoadingState label="Loading content..." />
      </section>
    );
  }
  return (
    <ImageEditor
      projectId={projectId}
      source={item}
      onBack={() => leave({ view: 'projects', projectId })}
      onOpenApprovals={() => leave({ view: 'approvals', projectId })}
    />
  );
}

function ImageEditor({
  projectId,
  source,
  onBack,
  onOpenApprovals,
}: {
  projectId: string | null;
  source: ContentItem | null;
  onBack: () => void;
  onOpenApprovals: () => void;
}): ReactElement {
  const user = useAtomValue(currentUserAtom);
  const stats = useAtomValue(approvalStatsStateAtom);
  const refreshStats = useSetAtom(refreshApprovalStatsAtom);
  const refreshList = useSetAtom(refreshApprovalsListAtom);
  const refreshCredits = useSetAtom(refreshCreditsAtom);
  const openBilling = useSetAtom(openBillingAtom);
  const [check, setCheck] = useState<CanCreateContentResult | null>(null);
  const [prompt, setPrompt] = useState('');
  // the framing that keeps the whole render (formatChoice.ts); the user may choose a cropping one
  const [format, setFormat] = useState<ImageEditFormat>(() => initialFormat(source?.data.width, source?.data.height));
  const [promptError, setPromptError] = useState<string | null>(null);
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const [capHit, setCapHit] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const promptId = useId();
  const formatId = useId();

  // the count may have moved since it was last read
  useEffect(() => {
    refreshStats({ fresh: true });
  }, [refreshStats]);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  // the start rule, read again whenever the approval count or the balance moves: pending items may hold the credit an
  // image needs, and a purchase or a teammate's charge changes what is available
  const balanceKey = useAtomValue(balanceKeyAtom);
  useEffect(() => {
    let live = true;
    fetchCanCreate('image').then(
      (answer) => live && setCheck(answer),
      () => live && setCheck(null),
    );
    return () => {
      live = false;
    };
  }, [stats, balanceKey]);

  const openApprovals = onOpenApprovals;

  if (!source || !projectId) {
    return (
      <section className="view image-editor" aria-labelledby="image-editor-title">
        <button type="button" className="link-button back-link" onClick={onBack}>
          <Icon name="arrowLeft" size={18} /> Back to Project
        </button>
        <h1 id="image-editor-title">Enhanced AI Editor</h1>
        <div className="empty-state">
          <p>No content selected for image generation.</p>
          <button type="button" className="button button-primary" onClick={onBack}>
            Back to Project
          </button>
        </div>
      </section>
    );
  }
  const item = source;
  const project = projectId;

  const checking = stats === undefined;
  const counts = stats?.ok && stats.data ? stats.data : null;
  const atCap = capHit || (counts !== null && countedTowardsCap(counts) >= counts.limit);
  const heldByPending = !atCap && check?.reason === 'pending_cost';

  async function submit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (!prompt.trim()) {
      setPromptError(MSG.promptRequired);
      return;
    }
    if (!user) {
      setPhase({ kind: 'failed', message: MSG.loginToGenerate });
      return;
    }
    setPromptError(null);
    setPhase({ kind: 'generating' });
    try {
      const answer = await generateImageEdit({
        projectId: project,
        userId: user.id,
        baseImage: item.data.id,
        prompt: prompt.trim(),
        format,
        quality: IMAGE_EDIT_DEFAULTS.quality,
        upscaleScale: IMAGE_EDIT_DEFAULTS.upscaleScale,
      });
      setPhase({ kind: 'sent', answer });
      announceApprovalsChanged();
      refreshList({ force: true });
      refreshStats({ fresh: true });
      refreshCredits();
      if (answer.result?.savedImage.status === 'pending_approval' || answer.result === null) {
        timer.current = setTimeout(openApprovals, TO_APPROVALS_DELAY_MS);
      }
    } catch (error) {
      if (isApiHttpError(error) && error.code === 'PENDING_LIMIT_REACHED') {
        setCapHit(true);
        refreshStats({ fresh: true });
        setPhase({ kind: 'idle' });
        return;
      }
      setPhase({ kind: 'failed', message: failureText(error) });
      refreshCredits();
    }
  }

  const generating = phase.kind === 'generating';
  const preview = phase.kind === 'sent' ? phase.answer.result?.savedImage.previewUrl : null;
  // the render's 2048 px preview (or its thumbnail), never an original of up to 150 MB
  const image = dialogPicture(item);
  // a larger source goes to the AI as a reduced copy: said near the action
  const reductionNote = sourceReductionNote(item.data.width, item.data.height);
  // what the chosen format makes of this render, the crop said before anything is made
  const outcome =
    typeof item.data.width === 'number' && typeof item.data.height === 'number' && item.data.width > 0 && item.data.height > 0
      ? imageEditOutcomeNote({ width: item.data.width, height: item.data.height }, format, IMAGE_EDIT_DEFAULTS.quality, IMAGE_EDIT_DEFAULTS.upscaleScale)
      : null;

  return (
    <section className="view image-editor" aria-labelledby="image-editor-title">
      <button type="button" className="link-button back-link" onClick={onBack}>
        <Icon name="arrowLeft" size={18} /> Back to Project
      </button>
      <header className="view-header">
        <h1 id="image-editor-title">Enhanced AI Editor</h1>
      </header>

      <div className="image-editor-layout">
        <aside className="panel image-editor-source" aria-label="Source image">
          <h2>Source image</h2>
          {image ? <img src={image} alt={item.data.name} /> : <div className="image-editor-placeholder">No preview</div>}
          <p className="image-editor-source-name">{item.data.name}</p>
          <p className="muted">
            {sizeLabel(item.data.file_size)}
            {typeof item.data.width === 'number' && typeof item.data.height === 'number' ? ` · ${item.data.width} × ${item.data.height}` : ''}
          </p>
        </aside>

        <div className="panel image-editor-form">
          {checking ? (
            <LoadingState label="Checking credit availability..." />
          ) : (
            <form onSubmit={(event) => void submit(event)} noValidate>
              <div className="field">
                <label htmlFor={promptId}>Describe how you want to transform the image</label>
                <textarea
                  id={promptId}
                  rows={5}
                  value={prompt}
                  maxLength={IMAGE_PROMPT_MAX_LENGTH}
                  placeholder="e.g. a snowy winter evening with warm light in the windows"
                  aria-invalid={promptError ? true : undefined}
                  aria-describedby={promptError ? `${promptId}-error` : undefined}
                  disabled={generating || phase.kind === 'sent'}
                  onChange={(event) => {
                    setPrompt(event.target.value);
                    if (promptError) setPromptError(null);
                  }}
                />
                {promptError && (
                  <p id={`${promptId}-error`} className="field-error" role="alert">
                    {promptError}
                  </p>
                )}
              </div>
              <div className="field">
                <label htmlFor={formatId}>Format</label>
                <select id={formatId} value={format} disabled={generating || phase.kind === 'sent'} onChange={(event) => setFormat(event.target.value as ImageEditFormat)}>
                  {FORMATS.map((f) => (
                    <option key={f.value} value={f.value}>
                      {f.label}
                    </option>
                  ))}
                </select>
                <p className="field-hint" id={`${formatId}-outcome`}>
                  {outcome ? outcome.result : 'HD: made at up to 1024 px on the long side, then upscaled 2×.'} The preview is free; saving it from Approvals uses 1 credit.
                </p>
                {outcome?.crop && (
                  <p className="field-hint image-editor-crop-note" role="note">
                    {outcome.crop}
                  </p>
                )}
              </div>
              {heldByPending && phase.kind !== 'sent' && (
                <PendingCostNotice
                  item="image"
                  cost={CREDIT_COST.image}
                  pendingCost={check.pendingCost}
                  available={check.available}
                  onReviewApprovals={openApprovals}
                  onAddCredits={() => openBilling()}
                />
              )}
              {phase.kind === 'failed' && (
                <p className="form-error" role="alert">
                  {phase.message}
                </p>
              )}
              {reductionNote && <p className="field-hint">{reductionNote}</p>}
              <div className="form-actions">
                <button type="submit" className="button button-primary" disabled={generating || phase.kind === 'sent' || atCap || heldByPending}>
                  <Icon name="sparkles" size={18} /> {generating ? 'Generating preview...' : 'Generate Preview'}
                </button>
              </div>
            </form>
          )}
          {generating && <LoadingState label="Refining your prompt, generating and upscaling..." />}
          {phase.kind === 'sent' && (
            <div className="image-editor-sent" role="status">
              {preview && <img src={preview} alt="Watermarked preview of the generated image" />}
              <p>
                <strong>{phase.answer.result ? 'Your image was sent for approval.' : 'Your image is still being generated. It will appear in Approvals when it is ready.'}</strong> Opening
                Approvals...
              </p>
              {phase.answer.metadata.warning && <p className="hint-banner">{phase.answer.metadata.warning}</p>}
            </div>
          )}
          {atCap && phase.kind !== 'sent' && (
            <PendingCapOverlay
              pendingCount={counts ? countedTowardsCap(counts) : PENDING_LIMIT_DEFAULT}
              limit={counts?.limit ?? PENDING_LIMIT_DEFAULT}
              onOpenApprovals={openApprovals}
              onBack={onBack}
            />
          )}
        </div>
      </div>
    </section>
  );
}
