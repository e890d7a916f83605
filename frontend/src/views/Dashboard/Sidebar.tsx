import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { useState, type ReactElement } from 'react';
import type { User } from '../../api/auth';
import { approvalStatsStateAtom } from '../../atoms/approvals';
import { openProjectIdAtom } from '../../atoms/project';
import { signOutAtom } from '../../atoms/session';
import { unknownViewAtom, viewAtom } from '../../atoms/view';
import { currentWorkspaceAtom, workspaceAllowsAtom } from '../../atoms/workspace';
import type { WorkspaceAction } from '../../../../domain/workspaceRoles';
import type { DashboardView } from '../../atoms/viewUrl';
import { BetaBadge } from '../../components/BetaBadge';
import { Icon, type IconName } from '../../components/Icon';
import { initialsFor } from '../../components/initials';
import { SidebarCredits } from './SidebarCredits';
import { WorkspaceSwitcher } from './WorkspaceSwitcher';
import { NotificationBell } from './NotificationBell';

const NAV: { view: DashboardView; label: string; icon: IconName; adminOnly?: true; beta?: true; needs?: WorkspaceAction }[] = [
  { view: 'projects', label: 'Projects', icon: 'folder' },
  { view: 'video-assembly', label: 'Video Assembly', icon: 'film', needs: 'assemble' },
  { view: 'enhance-set', label: 'Enhance Renders', icon: 'sparkles', beta: true, needs: 'generate' },
  { view: 'approvals', label: 'Approvals', icon: 'check' },
  { view: 'review-links', label: 'Review links', icon: 'send' },
  { view: 'activity', label: 'Activity', icon: 'activity' },
  { view: 'account', label: 'Account', icon: 'user' },
  { view: 'admin', label: 'Admin', icon: 'shield', adminOnly: true },
];

function PendingBadge(): ReactElement | null {
  const stats = useAtomValue(approvalStatsStateAtom);
  // no stats (loading, failed, endpoint missing) means no badge
  const count = stats?.ok ? (stats.data?.pending_count ?? 0) : 0;
  if (count <= 0) return null;
  return (
    <span className="nav-badge">
      {count}
      <span className="visually-hidden"> pending</span>
    </span>
  );
}

/** `onNavigate`: a nav item was chosen, also the current one (the slide-in menu closes either way). */
export function Sidebar({ id, user, onNavigate }: { id: string; user: User; onNavigate?: () => void }): ReactElement {
  const [view, setView] = useAtom(viewAtom);
  const unknownView = useAtomValue(unknownViewAtom);
  const openProject = useSetAtom(openProjectIdAtom);
  const signOut = useSetAtom(signOutAtom);
  const [signingOut, setSigningOut] = useState(false);
  const workspace = useAtomValue(currentWorkspaceAtom);
  const allows = useAtomValue(workspaceAllowsAtom);
  // a role without a view's action (a viewer) does not see it; while the role loads, nothing is hidden
  const roleKnown = workspace?.role !== undefined;
  // a person working alone in their personal workspace sees no member list: only a team has one to show
  const showMembers = !!workspace && (!workspace.personal || (workspace.memberCount ?? 1) > 1 || view === 'members');
  // webhooks are the workspace's admins' and owners' (a person alone owns their personal workspace)
  const showWebhooks = !!workspace && roleKnown && allows('webhooks');
  // every member sees the brand kit and the music new videos use; admins and owners change the kit, members the music
  const showBrandKit = !!workspace;

  async function onSignOut() {
    setSigningOut(true);
    try {
      await signOut();
    } finally {
      setSigningOut(false);
    }
  }

  return (
    <aside id={id} className="sidebar" aria-label="Sidebar">
      <div className="sidebar-brand brand">
        <span className="brand-mark" aria-hidden="true">
          R
        </span>
        <span>Render Studio</span>
        <NotificationBell onNavigate={onNavigate} />
      </div>

      <div className="sidebar-workspace">
        <WorkspaceSwitcher onSwitched={onNavigate} />
        {(showMembers || showWebhooks || showBrandKit) && (
          <nav aria-label="Workspace">
            {showMembers && (
              <button
                type="button"
                className="nav-item"
                aria-current={view === 'members' && !unknownView ? 'page' : undefined}
                onClick={() => {
                  onNavigate?.();
                  setView('members');
                }}
              >
                <Icon name="users" />
                <span className="nav-label">Members</span>
              </button>
            )}
            {showWebhooks && (
              <button
                type="button"
                className="nav-item"
                aria-current={view === 'webhooks' && !unknownView ? 'page' : undefined}
                onClick={() => {
                  onNavigate?.();
                  setView('webhooks');
                }}
              >
                <Icon name="send" />
                <span className="nav-label">Webhooks</span>
              </button>
            )}
            {showBrandKit && (
              <button
                type="button"
                className="nav-item"
                aria-current={view === 'brand-kit' && !unknownView ? 'page' : undefined}
                onClick={() => {
                  onNavigate?.();
                  setView('brand-kit');
                }}
              >
                <Icon name="sparkles" />
                <span className="nav-label">Brand kit</span>
              </button>
            )}
            {showBrandKit && (
              <button
                type="button"
                className="nav-item"
                aria-current={view === 'music' && !unknownView ? 'page' : undefined}
                onClick={() => {
                  onNavigate?.();
                  setView('music');
                }}
              >
                <Icon name="music" />
                <span className="nav-label">Music</span>
              </button>
            )}
          </nav>
        )}
      </div>

      <SidebarCredits />

      <nav className="sidebar-nav" aria-label="Main">
        <ul>
          {NAV.filter((item) => (!item.adminOnly || user.role === 'admin') && (!item.needs || !roleKnown || allows(item.needs))).map((item) => (
            <li key={item.view}>
              <button
                type="button"
                className="nav-item"
                aria-current={view === item.view && !unknownView ? 'page' : undefined}
                onClick={() => {
                  onNavigate?.();
                  // "Projects" always means the list, also from inside a project
                  if (item.view === 'projects') openProject(null);
                  setView(item.view);
                }}
              >
                <Icon name={item.icon} />
                <span className="nav-label">{item.label}</span>
                {item.view === 'approvals' && <PendingBadge />}
                {item.beta && <BetaBadge />}
              </button>
            </li>
          ))}
        </ul>
      </nav>

      <div className="sidebar-footer">
        <div className="user-card">
          <span className="avatar" aria-hidden="true">
            {initialsFor(user.name, user.email)}
          </span>
          <div className="user-text">
            <p className="user-name">{user.name.trim() || user.email}</p>
            <p className="user-email">{user.email}</p>
          </div>
        </div>
        <button type="button" className="button button-ghost button-block sign-out" onClick={() => void onSignOut()} disabled={signingOut}>
          <Icon name="signOut" size={18} />
          {signingOut ? 'Signing out...' : 'Sign Out'}
        </button>
      </div>
    </aside>
  );
}
