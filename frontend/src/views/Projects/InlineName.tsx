import { useEffect, useRef, useState, type ReactElement } from 'react';
import { nameToSave } from './inlineName';

interface InlineNameProps {
  value: string;
  /** what the control is, for screen readers: "Rename project Harbour View" */
  label: string;
  onSave: (name: string) => Promise<void>;
  className?: string;
}

/**
 * A name that becomes a text field when clicked: Enter saves, Escape cancels, leaving the field saves;
 * an empty or unchanged value is not saved.
 */
export function InlineName({ value, label, onSave, className }: InlineNameProps): ReactElement {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(value);
  const [saving, setSaving] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const done = useRef(false);

  useEffect(() => {
    if (editing) {
      done.current = false;
      input.current?.focus();
      input.current?.select();
    }
  }, [editing]);

  async function commit(): Promise<void> {
    if (done.current) return;
    done.current = true;
    const name = nameToSave(draft, value);
    if (!name) {
      setEditing(false);
      return;
    }
    setSaving(true);
    try {
      await onSave(name);
    } finally {
      setSaving(false);
      setEditing(false);
    }
  }

  function cancel(): void {
    done.current = true;
    setDraft(value);
    setEditing(false);
  }

  if (editing) {
    return (
      <input
        ref={input}
        className={`inline-name-input ${className ?? ''}`}
        aria-label={label}
        value={draft}
        maxLength={200}
        disabled={saving}
        onChange={(e) => setDraft(e.target.value)}
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Enter') {
            e.preventDefault();
            void commit();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            cancel();
          }
        }}
        onBlur={() => void commit()}
      />
    );
  }
  return (
    <button
      type="button"
      className={`inline-name ${className ?? ''}`}
      title="Click to rename"
      aria-label={label}
      onClick={(e) => {
        e.stopPropagation();
        setDraft(value);
        setEditing(true);
      }}
    >
      {value}
    </button>
  );
}
