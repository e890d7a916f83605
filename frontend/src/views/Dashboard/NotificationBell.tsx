import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useId, useRef, useState, type ReactElement } from 'react';
import { markNotificationsRead, type NotificationView } from '../../api/notifications';
import { notificationsAtom, refreshNotificationsAtom } from '../../atoms/notifications';
import { openProjectIdAtom } from '../../atoms/project';
import { navigateAtom } from '../../atoms/view';
import { workspaceParamAtom } from '../../atoms/view';
import { Icon } from '../../components/Icon';
import { whenText } from '../Comments/commentFormat';
import './NotificationBell.css';

/**
 * The bell (issue 42): the unread count of the member's notifications in this workspace, live; opening it lists the
 * newest and marks them read. An entry opens its item: Approvals for a pending item, else its project.
 */
export function NotificationBell({ onNavigate }: { onNavigate?: () => void }): ReactElement {
  const list = useAtomValue(notificationsAtom);
  const refresh = useSetAtom(refreshNotificationsAtom);
  const navigate = useSetAtom(navigateAtom);
  const openProject = useSetAtom(openProjectIdAtom);
  const workspaceId = useAtomValue(workspaceParamAtom);
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);

  // read when the workspace changes (the list is per workspace)
  useEffect(() => {
    void refresh();
  }, [refresh, workspaceId]);

  const unread = list?.unread ?? 0;

  async function toggle(): Promise<void> {
    if (open) {
      setOpen(false);
      return;
    }
    setOpen(true);
    if (unread > 0) {
      await markNotificationsRead().catch(() => undefined);
      void refresh();
    }
  }

  useEffect(() => {
    if (!open) return;
    panel.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        button.current?.focus();
      }
    };
    const onClick = (e: MouseEvent) => {
      if (!panel.current?.contains(e.target as Node) && !button.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onClick);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onClick);
    };
  }, [open]);

  function go(entry: NotificationView): void {
    setOpen(false);
    onNavigate?.();
    if (entry.item?.kind === 'approval' && entry.kind !== 'decision') navigate({ view: 'approvals' });
    else if (entry.project_id) {
      navigate({ view: 'projects' });
      openProject(entry.project_id);
    } else navigate({ view: 'approvals' });
  }

  return (
    <div className="notification-bell">
      <button
        ref={button}
        type="button"
        className="icon-button notification-bell-button"
        aria-label={unread > 0 ? `Notifications, ${unread} unread` : 'Notifications'}
        aria-expanded={open}
        aria-controls={open ? panelId : undefined}
        onClick={() => void toggle()}
      >
        <Icon name="bell" size={20} />
        {unread > 0 && (
          <span className="notification-count" aria-hidden="true">
            {unread > 99 ? '99+' : unread}
          </span>
        )}
      </button>
      {open && (
        <div ref={panel} id={panelId} className="notification-panel" role="dialog" aria-label="Notifications" tabIndex={-1}>
          <h2 className="notification-title">Notifications</h2>
          {list === undefined && <p className="muted">Loading…</p>}
          {list === null && (
            <p className="form-error" role="alert">
              Could not load your notifications.{' '}
              <button type="button" className="link-button" onClick={() => void refresh()}>
                Try again
              </button>
            </p>
          )}
          {list && list.notifications.length === 0 && <p className="muted">Nothing yet. Mentions, approvals you are asked for and replies show here.</p>}
          {list && list.notifications.length > 0 && (
            <ul className="notification-list">
              {list.notifications.map((n) => (
                <li key={n.id} className={n.read ? 'notification-read' : 'notification-unread'}>
                  <button type="button" className="notification-entry" onClick={() => go(n)}>
                    <span className="notification-text">{n.text}</span>
                    <time className="muted" dateTime={n.created_at}>
                      {whenText(n.created_at)}
                    </time>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
