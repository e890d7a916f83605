import type { ReactElement } from 'react';

/** An inline loading indicator with its text for screen readers and sighted users alike. */
export function LoadingState({ label }: { label: string }): ReactElement {
  return (
    <div className="loading-state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}
