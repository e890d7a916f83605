import { useEffect, useId, useRef, type ReactElement, type ReactNode } from 'react';
import { Icon } from './Icon';

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** extra class on the panel, e.g. for a wider layout */
  className?: string;
}

/** A modal built on <dialog>: the browser gives focus trapping, Escape and the inert background. */
export function Dialog({ title, onClose, children, className }: DialogProps): ReactElement {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();

  useEffect(() => {
    const dialog = ref.current;
    // focus goes back to what opened the dialog: the browser's own return is lost once React removes the element
    const opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    if (dialog && !dialog.open) {
      dialog.showModal();
      // start in the first field of a form dialog rather than on its close button
      dialog.querySelector<HTMLElement>('[autofocus], input:not([readonly]), textarea, select')?.focus();
    }
    return () => {
      dialog?.close();
      if (opener?.isConnected && !dialog?.contains(opener)) opener.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className={`dialog ${className ?? ''}`}
      aria-labelledby={titleId}
      onCancel={(event) => {
        // React passes a nested dialog's cancel (Escape) up its component tree: only this dialog's own closes it
        if (event.target !== event.currentTarget) return;
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        // a click on the backdrop lands on the <dialog> element itself
        if (event.target === event.currentTarget) onClose();
      }}
    >
      <div className="dialog-panel">
        <header className="dialog-header">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
            <Icon name="close" />
          </button>
        </header>
        {children}
      </div>
    </dialog>
  );
}
