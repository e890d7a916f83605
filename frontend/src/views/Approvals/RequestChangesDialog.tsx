import { useId, useState, type FormEvent, type ReactElement } from 'react';
import { requestChanges, type ApprovalListItem, type ChangeRequestResponse } from '../../api/approvals';
import { apiErrorMessage, isApiHttpError } from '../../api/client';
import { Dialog } from '../../components/Dialog';
import { COMMENT_MAX_CHARS } from '../../../../domain/comments';
import { PLATFORMS, VIDEO_EFFECTS } from '../../../../domain/constants';
import { CHANGE_REQUEST_MSG, versionLabel } from '../../../../domain/changeRequests';
import { MSG } from '../../../../domain/messages';

interface RequestChangesDialogProps {
  item: ApprovalListItem;
  onClose: () => void;
  /** the request went through: the item is rejected and (unless `answer.next` is null) its next version is being made */
  onRequested: (answer: ChangeRequestResponse) => void;
  /** the refusal needs a credit package bought (REJECTION_REQUIRES_PURCHASE): what the screen offers to do about it */
  onBuyCredits?: () => void;
}

/**
 * "Request changes" (issue 42, DESIGN.md "Review"): what should change, and for a clip its effect and platform for
 * the next version. Sending it rejects the item under the usual rules (its credits are released) and starts the next
 * version from the same source. A refusal (no purchase yet, generation paused, the source deleted ...) is shown
 * here with what to do, and nothing has changed.
 */
export function RequestChangesDialog({ item, onClose, onRequested, onBuyCredits }: RequestChangesDialogProps): ReactElement {
  const [text, setText] = useState('');
  const [effect, setEffect] = useState(item.clip_settings?.effect ?? VIDEO_EFFECTS[0]);
  const [platform, setPlatform] = useState(item.clip_settings?.platform ?? PLATFORMS[0]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; buy: boolean } | null>(null);
  const fieldId = useId();
  const hintId = useId();
  const clip = item.content_type === 'clip';
  const next = versionLabel(item.version + 1);

  async function submit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (!text.trim()) {
      setError({ message: CHANGE_REQUEST_MSG.requestRequired, buy: false });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onRequested(await requestChanges(item.id, { request: text, settings: clip ? { effect, platform } : null }));
    } catch (err) {
      const buy = isApiHttpError(err) && err.code === 'REJECTION_REQUIRES_PURCHASE';
      setError({ message: apiErrorMessage(err, MSG.somethingWentWrong), buy });
      setBusy(false);
    }
  }

  return (
    <Dialog title={`Request changes: ${item.file_name}`} onClose={onClose} className="request-changes-dialog">
      <form className="request-changes-form" onSubmit={(e) => void submit(e)} aria-label="Request changes">
        <p className="muted">
          This item ({versionLabel(item.version)}) is rejected and its credits are released. A new version ({next}) is made from the same source
          {clip ? ' with the same effect and settings (change them below), your request as guidance' : ', with your request added to its prompt'}, and it reserves its own
          credits. Your request stays in the item&apos;s comments.
        </p>
        <div className="field">
          <label htmlFor={fieldId}>What should change?</label>
          <textarea
            id={fieldId}
            rows={4}
            maxLength={COMMENT_MAX_CHARS}
            value={text}
            aria-describedby={hintId}
            aria-invalid={error !== null && !text.trim() ? true : undefined}
            onChange={(e) => setText(e.target.value)}
            placeholder={clip ? 'For example: fly in from the water side, slower' : 'For example: warm light in the windows, less snow on the path'}
          />
          <p id={hintId} className="field-hint">
            {text.length.toLocaleString('en')} / {COMMENT_MAX_CHARS.toLocaleString('en')} characters
          </p>
        </div>
        {clip && (
          <div className="request-changes-settings">
            <div className="field">
              <label htmlFor={`${fieldId}-effect`}>Effect</label>
              <select id={`${fieldId}-effect`} value={effect} onChange={(e) => setEffect(e.target.value)}>
                {VIDEO_EFFECTS.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor={`${fieldId}-platform`}>Platform</label>
              <select id={`${fieldId}-platform`} value={platform} onChange={(e) => setPlatform(e.target.value)}>
                {PLATFORMS.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            </div>
          </div>
        )}
        {error && (
          <div className="form-error request-changes-error" role="alert">
            <p>{error.message}</p>
            {error.buy && onBuyCredits && (
              <button type="button" className="button button-secondary button-small" onClick={onBuyCredits}>
                Buy credits
              </button>
            )}
          </div>
        )}
        <div className="form-actions">
          <button type="button" className="button button-ghost" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Requesting...' : `Request changes (${next})`}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
