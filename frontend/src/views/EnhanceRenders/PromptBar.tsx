import { useId, useState, type ClipboardEvent, type DragEvent, type KeyboardEvent, type ReactElement } from 'react';
import { ENHANCE_MSG } from '../../../../domain/enhanceRenders';
import { Icon } from '../../components/Icon';
import type { Attachment, Scope } from './draftState';
import { MODE_CHOICES, modelsForMode, type EnhanceMode, type EnhanceModelOption } from './modelChoices';


interface PromptBarProps {
  mode: EnhanceMode;
  model: EnhanceModelOption;
  onModeChange: (mode: EnhanceMode) => void;
  onModelChange: (modelId: string) => void;
  scope: Scope;
  onScopeChange: (scope: Scope) => void;
  syncOn: boolean;
  pinnedName: string | null;
  onSyncOn: () => void;
  onSyncCancel: () => void;
  attachments: readonly Attachment[];
  selectedAttachmentId: string | null;
  /** why attachments cannot be added now (model, Sync Images), or null */
  attachmentBlock: string | null;
  attachmentsBusy: boolean;
  onAttachFiles: (files: File[]) => void;
  onSelectAttachment: (id: string) => void;
  onToggleUseForLook: (id: string) => void;
  onRemoveAttachment: (id: string) => void;
  prompt: string;
  onPromptChange: (text: string) => void;
  enhancing: boolean;
  onEnhance: () => void;
  running: boolean;
  onRun: () => void;
  /** Why Run cannot start yet (Style Transfer without a reference): said beside Run, which stays disabled. */
  runBlock?: string | null;
  /** Why the last Run did not start (no image selected, none saved yet, no pinned style): said beside Run. */
  runRefusal?: string | null;
  /** Said near Run when the model will work on a reduced copy of an image of the draft (its size limit), else null. */
  workingCopyNote?: string | null;
}

function imageFiles(list: FileList | DataTransferItemList | null | undefined): File[] {
  if (!list) return [];
  const files: File[] = [];
  for (const entry of Array.from(list as ArrayLike<File | DataTransferItem>)) {
    const file = entry instanceof File ? entry : entry.kind === 'file' ? entry.getAsFile() : null;
    if (file && file.type.startsWith('image/')) files.push(file);
  }
  return files;
}

/**
 * The bottom prompt bar: mode and model, scope, Sync Images, reference attachments (pasted or dropped image files
 * only) and the prompt. Enter runs, Shift+Enter adds a line; upscales take no prompt.
 */
export function PromptBar(props: PromptBarProps): ReactElement {
  const { model, syncOn } = props;
  const [dragging, setDragging] = useState(false);
  const promptEnabled = model.promptEnabled;
  const models = modelsForMode(props.mode);
  const ids = useId();
  const runBlock = props.runBlock ?? null;
  const runNote = runBlock ?? props.runRefusal ?? null;
  const canRun = !props.running && runBlock === null;

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>): void {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      if (canRun) props.onRun();
    }
  }

  function onPaste(event: ClipboardEvent<HTMLTextAreaElement>): void {
    const files = imageFiles(event.clipboardData?.files);
    if (files.length === 0) return;
    event.preventDefault();
    props.onAttachFiles(files);
  }

  function onDrop(event: DragEvent<HTMLElement>): void {
    event.preventDefault();
    setDragging(false);
    const files = imageFiles(event.dataTransfer?.files);
    if (files.length > 0) props.onAttachFiles(files);
  }

  return (
    <form
      className={`prompt-bar${dragging ? ' prompt-bar-dragging' : ''}`}
      aria-label="Prompt bar"
      onSubmit={(e) => {
        e.preventDefault();
        if (canRun) props.onRun();
      }}
      onDragOver={(e) => {
        if (Array.from(e.dataTransfer.types).includes('Files')) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
      }}
      onDrop={onDrop}
    >
      <div className="prompt-bar-options">
        <div className="prompt-select">
          <label htmlFor={`${ids}-mode`}>Mode</label>
          <select className="control" id={`${ids}-mode`} value={props.mode} onChange={(e) => props.onModeChange(e.target.value as EnhanceMode)} disabled={syncOn}>
            {MODE_CHOICES.map((m) => (
              <option key={m.mode} value={m.mode}>
                {m.label}
              </option>
            ))}
          </select>
        </div>
        <div className="prompt-select">
          <label htmlFor={`${ids}-model`}>Model</label>
          <select className="control" id={`${ids}-model`} value={model.id} onChange={(e) => props.onModelChange(e.target.value)} disabled={syncOn || models.length < 2}>
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
          </select>
          {model.hint && <small className="prompt-model-hint">{model.hint}</small>}
        </div>
        <div className="prompt-select">
          <label htmlFor={`${ids}-scope`}>Apply to</label>
          <select className="control" id={`${ids}-scope`} value={props.scope} onChange={(e) => props.onScopeChange(e.target.value as Scope)}>
            <option value="selected">Selected images</option>
            <option value="first selected">First selected image</option>
            <option value="all">All images</option>
          </select>
        </div>
        {syncOn ? (
          <div className="sync-controls" role="group" aria-label="Sync Images">
            <span className="sync-state">{props.pinnedName ? `Style: ${props.pinnedName}` : 'Pin one image as the style'}</span>
            <button type="button" className="button button-ghost button-small" onClick={props.onSyncCancel}>
              Cancel
            </button>
          </div>
        ) : (
          <button type="button" className="button button-secondary button-small" onClick={props.onSyncOn}>
            Sync Images
          </button>
        )}
      </div>

      <div className="attachments" aria-label="Reference attachments">
        {props.attachments.length > 0 && (
          <ul className="attachment-list">
            {props.attachments.map((a) => (
              <li key={a.id} className={`attachment${a.id === props.selectedAttachmentId ? ' attachment-selected' : ''}`}>
                <button type="button" className="attachment-thumb" aria-pressed={a.id === props.selectedAttachmentId} aria-label={`Reference ${a.name}`} onClick={() => props.onSelectAttachment(a.id)}>
                  <img src={a.url} alt="" />
                </button>
                <label className="attachment-look">
                  <input type="checkbox" checked={a.useForLook} onChange={() => props.onToggleUseForLook(a.id)} /> Use for look
                </label>
                <button type="button" className="icon-button" aria-label={`Remove reference ${a.name}`} onClick={() => props.onRemoveAttachment(a.id)}>
                  <Icon name="close" size={16} />
                </button>
              </li>
            ))}
          </ul>
        )}
        <p className="attachment-hint muted">
          <Icon name="paperclip" size={16} />{' '}
          {props.attachmentsBusy ? 'Adding reference...' : (props.attachmentBlock ?? `Paste or drop up to ${model.maxReferences} reference images`)}
        </p>
      </div>

      <div className="prompt-row">
        <label htmlFor="enhance-prompt" className="visually-hidden">
          Prompt
        </label>
        <textarea
          className="control"
          id="enhance-prompt"
          rows={2}
          value={promptEnabled ? props.prompt : ''}
          placeholder={promptEnabled ? 'Describe the change (Enter runs, Shift+Enter adds a line)' : ENHANCE_MSG.noPrompt}
          disabled={!promptEnabled}
          aria-describedby={promptEnabled ? undefined : 'enhance-no-prompt'}
          onChange={(e) => props.onPromptChange(e.target.value)}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
        />
        <div className="prompt-actions">
          <button type="button" className="button button-secondary" onClick={props.onEnhance} disabled={!promptEnabled || props.enhancing || !props.prompt.trim()}>
            <Icon name="sparkles" size={18} /> {props.enhancing ? 'Enhancing...' : 'Enhance prompt'}
          </button>
          <button type="submit" className="button button-primary" disabled={!canRun} aria-describedby={runNote ? `${ids}-run-note` : undefined}>
            {props.running ? 'Starting...' : 'Run'}
          </button>
        </div>
      </div>
      {/* beside Run, not in a toast over it: a standing reason (Run disabled) or why the last Run did not start */}
      {runNote && (
        <p id={`${ids}-run-note`} className={`prompt-run-note${runBlock ? '' : ' prompt-run-refused'}`} role={runBlock ? 'status' : 'alert'}>
          {runBlock && <Icon name="paperclip" size={16} />} {runNote}
        </p>
      )}
      {!promptEnabled && (
        <p id="enhance-no-prompt" className="muted prompt-note">
          {ENHANCE_MSG.noPrompt}
        </p>
      )}
      {props.workingCopyNote && <p className="muted prompt-note">{props.workingCopyNote}</p>}
    </form>
  );
}
