import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { useState, type ReactElement } from 'react';
import type { User } from '../../api/auth';
import { approvalStatsStateAtom } from '../../atoms/approvals';
import { openProjectIdAtom } from '../../atoms/project';
import { signOutAtom } from '../../atoms/session';
import { viewAtom } from '../../atoms/view';
import type { DashboardView } from '../../atoms/viewUrl';
import { Icon, type IconName } from '../../components/Icon';
import { initialsFor } from '../../components/initials';
import { SidebarCredits } from './SidebarCredits';

const NAV: { view: DashboardView; label: string; icon: IconName; adminOnly?: true }[] = [
  { view: 'projects', label: 'Projects', icon: 'folder' },
  { view: 'approvals', label: 'Approvals', icon: 'check' },
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

export function Sidebar({ id, user }: { id: string; user: User }): ReactElement {
  const [view, setView] = useAtom(viewAtom);
  const openProject = useSetAtom(openProjectIdAtom);
  const signOut = useSetAtom(signOutAtom);
  const [signingOut, setSigningOut] = useState(false);

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
      </div>

      <SidebarCredits />

      <nav className="sidebar-nav" aria-label="Main">
        <ul>
          {NAV.filter((item) => !item.adminOnly || user.role === 'admin').map((item) => (
            <li key={item.view}>
              <button
                type="button"
                className="nav-item"
                aria-current={view === item.view ? 'page' : undefined}
                onClick={() => {
                  // "Projects" always means the list, also from inside a project
                  if (item.view === 'projects') openProject(null);
                  setView(item.view);
                }}
              >
                <Icon name={item.icon} />
                <span className="nav-label">{item.label}</span>
                {item.view === 'approvals' && <PendingBadge />}
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
