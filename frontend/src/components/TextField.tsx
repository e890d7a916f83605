import { useId, type InputHTMLAttributes, type ReactElement, type ReactNode } from 'react';

interface TextFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> {
  label: string;
  /** help text under the field, linked with aria-describedby */
  hint?: ReactNode;
  /** a field-level error, announced and linked to the input */
  error?: string | null;
  /** id of another element that describes the field (a strength meter) */
  describedBy?: string;
}

/** A labelled input with optional hint and error; the label is a real <label>, so tests and readers find it. */
export function TextField({ label, hint, error, describedBy, className, ...input }: TextFieldProps): ReactElement {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedByIds = [hint ? hintId : null, error ? errorId : null, describedBy ?? null].filter(Boolean).join(' ');
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedByIds || undefined}
        {...input}
      />
      {hint && (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
