import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useId, useRef, useState, type FormEvent, type KeyboardEvent, type ReactElement } from 'react';
import { ROLE_LABELS } from '../../../../domain/workspaceRoles';
import { apiErrorMessage } from '../../api/client';
import { createWorkspaceAtom, currentWorkspaceAtom, switchWorkspaceAtom, workspacesStateAtom } from '../../atoms/workspace';
import { Dialog } from '../../components/Dialog';
import { Icon } from '../../components/Icon';
import { TextField } from '../../components/TextField';

/** The longest workspace name the server takes (WORKSPACE_MSG.nameTooLong). */
const NAME_MAX = 100;

function NewWorkspaceDialog({ onClose }: { onClose: () => void }): ReactElement {
  const create = useSetAtom(createWorkspaceAtom);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await create(name.trim());
      onClose();
    } catch (err) {
      setError(apiErrorMessage(err, 'Could not create the workspace. Please try again.'));
      setBusy(false);
    }
  }

  return (
    <Dialog title="New workspace" onClose={onClose}>
      <form onSubmit={(e) => void submit(e)} aria-label="New workspace">
        <p className="muted">A shared place for a team: its own projects, approvals and credits. You can invite people once it exists.</p>
        <TextField label="Workspace name" name="workspace-name" required maxLength={NAME_MAX} value={name} onChange={(e) => setName(e.target.value)} />
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="button" className="button button-ghost" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy || !name.trim()}>
            {busy ? 'Creating...' : 'Create workspace'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * The sidebar's workspace switcher: a menu button whose menu lists the user's workspaces (personal first, then by
 * name, each with the user's role) and "New workspace". Arrow keys, Home and End move, Enter or Space choose,
 * Escape and Tab close; focus returns to the button.
 */
export function WorkspaceSwitcher({ onSwitched }: { onSwitched?: () => void }): ReactElement {
  const current = useAtomValue(currentWorkspaceAtom);
  const listed = useAtomValue(workspacesStateAtom);
  const switchTo = useSetAtom(switchWorkspaceAtom);
  const [open, setOpen] = useState(false);
  const [creating, setCreating] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const itemsRef = useRef<(HTMLButtonElement | null)[]>([]);
  const menuId = useId();

  const workspaces = listed?.ok ? listed.data : [];
  const name = current?.name ?? 'Workspace';
  // the first focus on opening: the current workspace
  const currentIndex = Math.max(0, workspaces.findIndex((w) => w.id === current?.id));
  itemsRef.current.length = workspaces.length + 1;

  useEffect(() => {
    if (open) itemsRef.current[currentIndex]?.focus();
  }, [open, currentIndex]);

  function close(returnFocus: boolean) {
    setOpen(false);
    if (returnFocus) buttonRef.current?.focus();
  }

  function onMenuKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const items = itemsRef.current.filter((el): el is HTMLButtonElement => el !== null);
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    let next: number | null = null;
    if (event.key === 'ArrowDown') next = (at + 1) % items.length;
    else if (event.key === 'ArrowUp') next = (at - 1 + items.length) % items.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = items.length - 1;
    else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close(true);
      return;
    } else if (event.key === 'Tab') {
      close(false);
      return;
    }
    if (next === null) return;
    event.preventDefault();
    items[next]?.focus();
  }

  function onButtonKeyDown(event: KeyboardEvent<HTMLButtonElement>) {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      setOpen(true);
    }
  }

  return (
    <div className="workspace-switcher">
      <button
        ref={buttonRef}
        type="button"
        className="workspace-button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => setOpen((o) => !o)}
        onKeyDown={onButtonKeyDown}
      >
        <span className="workspace-mark" aria-hidden="true">
          {name.trim().charAt(0).toUpperCase() || 'W'}
        </span>
        {/* named by what it shows: "Workspace: Harbour Team, Owner" */}
        <span className="workspace-text">
          <span className="workspace-name">
            <span className="visually-hidden">Workspace: </span>
            {name}
          </span>
          {current?.role && (
            <span className="workspace-role">
              <span className="visually-hidden">, </span>
              {ROLE_LABELS[current.role]}
            </span>
          )}
        </span>
        <Icon name="chevronDown" size={16} />
      </button>

      {open && (
        <div
          id={menuId}
          className="workspace-menu"
          role="menu"
          aria-label="Workspaces"
          onKeyDown={onMenuKeyDown}
          onBlur={(event) => {
            if (!event.currentTarget.contains(event.relatedTarget as Node | null) && event.relatedTarget !== buttonRef.current) setOpen(false);
          }}
        >
          {listed === undefined && <p className="workspace-menu-note">Loading workspaces...</p>}
          {listed && !listed.ok && (
            <p className="workspace-menu-note" role="alert">
              {apiErrorMessage(listed.error, 'Unable to load workspaces')}
            </p>
          )}
          {workspaces.map((workspace, index) => (
            <button
              key={workspace.id}
              ref={(el) => {
                itemsRef.current[index] = el;
              }}
              type="button"
              role="menuitemradio"
              aria-checked={workspace.id === current?.id}
              tabIndex={-1}
              className="workspace-item"
              onClick={() => {
                close(true);
                if (workspace.id !== current?.id) {
                  switchTo(workspace.personal ? null : workspace.id);
                  onSwitched?.();
                }
              }}
            >
              <span className="workspace-item-name">{workspace.name}</span>
              <span className="workspace-item-role">{ROLE_LABELS[workspace.role]}</span>
            </button>
          ))}
          <div role="separator" className="workspace-menu-separator" />
          <button
            ref={(el) => {
              itemsRef.current[workspaces.length] = el;
            }}
            type="button"
            role="menuitem"
            tabIndex={-1}
            className="workspace-item workspace-new"
            onClick={() => {
              setOpen(false);
              setCreating(true);
            }}
          >
            <Icon name="plus" size={16} /> New workspace
          </button>
        </div>
      )}

      {creating && <NewWorkspaceDialog onClose={() => setCreating(false)} />}
    </div>
  );
}
