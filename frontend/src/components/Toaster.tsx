import { useAtomValue, useSetAtom } from 'jotai';
import type { ReactElement } from 'react';
import { dismissToastAtom, toastsAtom } from '../atoms/toast';
import { Icon } from './Icon';

/**
 * Renders the toast queue. The container is a live region that exists before any toast, so additions are
 * announced politely; errors are alerts on their own.
 */
export function Toaster(): ReactElement {
  const toasts = useAtomValue(toastsAtom);
  const dismiss = useSetAtom(dismissToastAtom);
  return (
    <div className="toaster" role="status" aria-live="polite" aria-label="Notifications">
      {toasts.map((toast) => (
        <div key={toast.id} className={`toast toast-${toast.kind}`} role={toast.kind === 'error' ? 'alert' : undefined}>
          <span className="toast-message">{toast.message}</span>
          <button type="button" className="toast-close" aria-label="Dismiss notification" onClick={() => dismiss(toast.id)}>
            <Icon name="close" size={16} />
          </button>
        </div>
      ))}
    </div>
  );
}
