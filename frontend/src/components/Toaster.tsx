import { useAtomValue, useSetAtom } from 'jotai';
import type { ReactElement } from 'react';
import { dismissToastAtom, toastsAtom } from '../atoms/toast';
import { Icon } from './Icon';

/** Renders the toast queue; success and info are polite announcements, errors are alerts. */
export function Toaster(): ReactElement {
  const toasts = useAtomValue(toastsAtom);
  const dismiss = useSetAtom(dismissToastAtom);
  return (
    <div className="toaster" aria-live="polite">
      {toasts.map((toast) => (
        <div key={toast.id} className={`toast toast-${toast.kind}`} role={toast.kind === 'error' ? 'alert' : 'status'}>
          <span className="toast-message">{toast.message}</span>
          <button type="button" className="toast-close" aria-label="Dismiss notification" onClick={() => dismiss(toast.id)}>
            <Icon name="close" size={16} />
          </button>
        </div>
      ))}
    </div>
  );
}
