import { useId, useLayoutEffect, useRef, useState, type ReactElement, type ReactNode } from 'react';
import { COMMENT_MAX_CHARS } from '../../../../domain/comments';
import { mentionCandidates, mentionQueryAt } from './commentFormat';

export interface MentionableMember {
  userId: string;
  name: string;
  email: string;
}

interface ComposerProps {
  /** the field's visible label */
  label: string;
  submitLabel: string;
  busyLabel: string;
  initial?: string;
  members: readonly MentionableMember[];
  /** sends the text; resolves when it was accepted (the field empties), rejects with the message to show */
  onSubmit: (body: string) => Promise<void>;
  onCancel?: () => void;
  /** controls between the field and the buttons (the pin of a new thread) */
  extra?: ReactNode;
  autoFocus?: boolean;
}

/**
 * A comment's text field: plain text up to COMMENT_MAX_CHARS characters with a counter, and "@" followed by the start
 * of a name lists the workspace's members to mention (arrow keys and Enter or Tab choose, Escape closes). Ctrl+Enter
 * (Cmd+Enter) sends.
 */
export function CommentComposer({ label, submitLabel, busyLabel, initial = '', members, onSubmit, onCancel, extra, autoFocus }: ComposerProps): ReactElement {
  const [text, setText] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [mention, setMention] = useState<{ start: number; query: string } | null>(null);
  const [active, setActive] = useState(0);
  const field = useRef<HTMLTextAreaElement>(null);
  const caretAfterRender = useRef<number | null>(null);
  const id = useId();
  const length = [...text].length;
  const tooLong = length > COMMENT_MAX_CHARS;
  const candidates = mention ? mentionCandidates(members, mention.query) : [];
  const listOpen = candidates.length > 0;

  const follow = (value: string, caret: number) => {
    setText(value);
    const next = mentionQueryAt(value, caret);
    setMention(next);
    setActive(0);
  };

  const choose = (member: MentionableMember) => {
    if (!mention) return;
    const caret = field.current?.selectionStart ?? text.length;
    const inserted = `@${member.name} `;
    const value = text.slice(0, mention.start) + inserted + text.slice(caret);
    setText(value);
    setMention(null);
    // the caret goes after the mention in the same task as the choice (a layout effect of this render): set a
    // frame later, it jumped back over whatever was typed meanwhile and scrambled it
    caretAfterRender.current = mention.start + inserted.length;
  };

  useLayoutEffect(() => {
    const at = caretAfterRender.current;
    if (at === null) return;
    caretAfterRender.current = null;
    field.current?.focus();
    field.current?.setSelectionRange(at, at);
  }, [text]);

  const submit = async () => {
    const body = text.trim();
    if (!body || tooLong || busy) return;
    setBusy(true);
    setError(null);
    try {
      await onSubmit(body);
      setText('');
      setMention(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not save the comment. Try again.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="comment-composer"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <label htmlFor={`${id}-text`} className="visually-hidden">
        {label}
      </label>
      <div className="comment-field">
        <textarea
          id={`${id}-text`}
          ref={field}
          value={text}
          rows={3}
          placeholder={`${label} (type @ to mention someone)`}
          autoFocus={autoFocus}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={listOpen}
          aria-controls={`${id}-mentions`}
          aria-activedescendant={listOpen ? `${id}-mention-${active}` : undefined}
          aria-invalid={tooLong || undefined}
          aria-describedby={`${id}-count${error ? ` ${id}-error` : ''}`}
          onChange={(event) => follow(event.target.value, event.target.selectionStart)}
          onKeyDown={(event) => {
            if (listOpen) {
              if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
                event.preventDefault();
                setActive((i) => (i + (event.key === 'ArrowDown' ? 1 : candidates.length - 1)) % candidates.length);
                return;
              }
              if (event.key === 'Enter' || event.key === 'Tab') {
                event.preventDefault();
                choose(candidates[active]);
                return;
              }
              if (event.key === 'Escape') {
                // closes the list, not the dialog around it
                event.preventDefault();
                event.stopPropagation();
                setMention(null);
                return;
              }
            }
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void submit();
            }
          }}
          onBlur={() => setTimeout(() => setMention(null), 150)}
        />
        <ul id={`${id}-mentions`} role="listbox" aria-label="Members to mention" className="comment-mentions" hidden={!listOpen}>
          {candidates.map((m, i) => (
            <li
              key={m.userId}
              id={`${id}-mention-${i}`}
              role="option"
              aria-selected={i === active}
              className={i === active ? 'comment-mention-active' : undefined}
              onMouseDown={(event) => {
                // keeps the focus in the field
                event.preventDefault();
                choose(m);
              }}
            >
              <span>{m.name}</span>
              {m.email !== m.name && <span className="muted"> {m.email}</span>}
            </li>
          ))}
        </ul>
      </div>
      {extra}
      <div className="comment-composer-actions">
        <span id={`${id}-count`} className={`comment-count${tooLong ? ' comment-count-over' : ''}`}>
          {length.toLocaleString('en')} / {COMMENT_MAX_CHARS.toLocaleString('en')}
        </span>
        {onCancel && (
          <button type="button" className="button button-ghost" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        )}
        <button type="submit" className="button button-primary" disabled={busy || !text.trim() || tooLong}>
          {busy ? busyLabel : submitLabel}
        </button>
      </div>
      {error && (
        <p id={`${id}-error`} className="form-error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
