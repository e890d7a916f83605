import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { lazy, Suspense, useEffect, useRef, useState, type ReactElement } from 'react';
import type { User } from '../../api/auth';
import { resetViewAtom, viewAtom, workspaceParamAtom } from '../../atoms/view';
import { currentWorkspaceAtom, switchWorkspaceAtom, workspaceAllowsAtom, workspaceEndedNoticeAtom } from '../../atoms/workspace';
import type { DashboardView } from '../../atoms/viewUrl';
import type { WorkspaceAction } from '../../../../domain/workspaceRoles';
import { RoleNote } from '../../components/RoleNote';
import { authTabFromSearch, hrefWithAuthTab } from '../../atoms/viewUrl';
import { Icon } from '../../components/Icon';
import { LoadingState } from '../../components/Spinner';
import { ApprovalsSync } from './ApprovalsSync';
import { LiveUpdatesNotice } from './LiveUpdatesNotice';
import { RealtimeSync } from './RealtimeSync';
import { NotificationBell } from './NotificationBell';
import { Sidebar } from './Sidebar';
import { TryItSetup } from './TryItSetup';
import { WorkspaceEndedNotice } from './WorkspaceEndedNotice';
import { VerifyEmailBanner } from './VerifyEmailBanner';
import { TwoFactorRequiredNotice } from './TwoFactorRequiredNotice';

const SIDEBAR_ID = 'app-sidebar';

// every view loads on demand, when it is first opened (one chunk each; the landing page loads none of them)
const ProjectsView = lazy(() => import('../Projects/ProjectsView').then((m) => ({ default: m.ProjectsView })));
const ApprovalsView = lazy(() => import('../Approvals/ApprovalsView').then((m) => ({ default: m.ApprovalsView })));
const AccountView = lazy(() => import('../Account/AccountView').then((m) => ({ default: m.AccountView })));
const ClipGenerationView = lazy(() => import('../ClipGeneration/ClipGenerationView').then((m) => ({ default: m.ClipGenerationView })));
const EnhancedEditorView = lazy(() => import('../ImageEditor/EnhancedEditorView').then((m) => ({ default: m.EnhancedEditorView })));
// only admins ever open it
const AdminView = lazy(() => import('../Admin/AdminView').then((m) => ({ default: m.AdminView })));
const VideoAssemblyView = lazy(() => import('../VideoAssembly/VideoAssemblyView').then((m) => ({ default: m.VideoAssemblyView })));
const EnhanceRendersView = lazy(() => import('../EnhanceRenders/EnhanceRendersView').then((m) => ({ default: m.EnhanceRendersView })));
const ActivityView = lazy(() => import('../Activity/ActivityView').then((m) => ({ default: m.ActivityView })));
const MembersView = lazy(() => import('../Members/MembersView').then((m) => ({ default: m.MembersView })));
const BrandKitView = lazy(() => import('../BrandKit/BrandKitView').then((m) => ({ default: m.BrandKitView })));
const WebhooksView = lazy(() => import('../Webhooks/WebhooksView').then((m) => ({ default: m.WebhooksView })));
const ReviewLinksView = lazy(() => import('../ReviewLinks/ReviewLinksView').then((m) => ({ default: m.ReviewLinksView })));

/** Views that only make things: a role without their action (a viewer) gets the reason instead (the server refuses anyway). */
const VIEW_ACTION: Partial<Record<DashboardView, { action: WorkspaceAction; title: string; what: string }>> = {
  'clip-generation': { action: 'generate', title: 'Generate Clip', what: 'generate clips' },
  'image-generation': { action: 'generate', title: 'Enhanced AI Editor', what: 'generate images' },
  'video-assembly': { action: 'assemble', title: 'Video Assembly', what: 'assemble videos' },
  'enhance-set': { action: 'generate', title: 'Enhance Renders', what: 'use Enhance Renders' },
};

/** The signed-in layout: sidebar (a slide-in menu under 768 px) and the current view. */
export function DashboardShell({ user }: { user: User }): ReactElement {
  const requestedView = useAtomValue(viewAtom);
  const resetView = useSetAtom(resetViewAtom);
  const [menuOpen, setMenuOpen] = useState(false);
  const isAdmin = user.role === 'admin';
  // the Admin view does not exist for anyone else: ?view=admin shows them the default view
  const view = requestedView === 'admin' && !isAdmin ? 'projects' : requestedView;

  useEffect(() => {
    if (requestedView === 'admin' && !isAdmin) resetView();
  }, [requestedView, isAdmin, resetView]);

  // the address names a workspace the user is not in (any more): say so until dismissed, and show the personal one
  const workspace = useAtomValue(currentWorkspaceAtom);
  const requestedWorkspaceId = useAtomValue(workspaceParamAtom);
  const switchWorkspace = useSetAtom(switchWorkspaceAtom);
  const allows = useAtomValue(workspaceAllowsAtom);
  const gate = VIEW_ACTION[view];
  const refused = gate && workspace?.role !== undefined && !allows(gate.action) ? gate : null;
  // the last workspace shown with its name: the one a removal (the event stream's workspace-ended) takes away
  const lastNamed = useRef<{ id: string; name: string } | null>(null);
  useEffect(() => {
    if (workspace?.name) lastNamed.current = { id: workspace.id, name: workspace.name };
  }, [workspace]);
  const [endedNotice, setEndedNotice] = useAtom(workspaceEndedNoticeAtom);
  const ended = endedNotice?.userId === user.id ? endedNotice : null;
  useEffect(() => {
    if (workspace !== null) return;
    const known = lastNamed.current;
    setEndedNotice({ userId: user.id, workspaceName: known && known.id === requestedWorkspaceId ? known.name : null });
    switchWorkspace(null, { replace: true });
  }, [workspace, requestedWorkspaceId, switchWorkspace, setEndedNotice, user.id]);

  // a signed-in visit to a landing link (/?auth=signup) has no auth form to open: drop the parameter
  useEffect(() => {
    if (authTabFromSearch(window.location.search)) window.history.replaceState(null, '', hrefWithAuthTab(window.location.href, null));
  }, []);

  // the slide-in menu closes on Escape, and whenever the view changes (also through Back)
  useEffect(() => setMenuOpen(false), [view]);
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setMenuOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [menuOpen]);

  return (
    <div className={`shell${menuOpen ? ' shell-menu-open' : ''}`}>
      <header className="mobile-bar">
        <button
          type="button"
          className="icon-button"
          aria-label={menuOpen ? 'Close menu' : 'Open menu'}
          aria-expanded={menuOpen}
          aria-controls={SIDEBAR_ID}
          onClick={() => setMenuOpen((open) => !open)}
        >
          <Icon name={menuOpen ? 'close' : 'menu'} />
        </button>
        <span className="brand">
          <span className="brand-mark" aria-hidden="true">
            R
          </span>
          <span>Render Studio</span>
        </span>
        {/* at phone size the bell stays in sight here (the sidebar's is in its hidden brand row) */}
        <NotificationBell />
      </header>

      <RealtimeSync />
      <ApprovalsSync />
      <TryItSetup />
      <Sidebar id={SIDEBAR_ID} user={user} onNavigate={() => setMenuOpen(false)} />
      <div className="sidebar-backdrop" aria-hidden="true" onClick={() => setMenuOpen(false)} />

      <main className="main" id="main">
        {ended && <WorkspaceEndedNotice workspaceName={ended.workspaceName} onDismiss={() => setEndedNotice(null)} />}
        {!user.emailVerified && <VerifyEmailBanner />}
        <TwoFactorRequiredNotice />
        <LiveUpdatesNotice />
        <Suspense fallback={<LoadingState label="Loading..." />}>
          {refused && (
            <section className="view" aria-labelledby="refused-title">
              <header className="view-header">
                <h1 id="refused-title">{refused.title}</h1>
              </header>
              <RoleNote what={refused.what} />
            </section>
          )}
          {!refused && view === 'projects' && <ProjectsView />}
          {!refused && view === 'approvals' && <ApprovalsView />}
          {!refused && view === 'account' && <AccountView />}
          {!refused && view === 'clip-generation' && <ClipGenerationView />}
          {!refused && view === 'image-generation' && <EnhancedEditorView />}
          {!refused && view === 'video-assembly' && <VideoAssemblyView user={user} />}
          {!refused && view === 'activity' && <ActivityView isAdmin={isAdmin} />}
          {!refused && view === 'enhance-set' && <EnhanceRendersView />}
          {!refused && view === 'admin' && <AdminView />}
          {!refused && view === 'members' && <MembersView user={user} />}
          {!refused && view === 'webhooks' && <WebhooksView />}
          {!refused && view === 'review-links' && <ReviewLinksView />}
          {!refused && view === 'brand-kit' && <BrandKitView />}
        </Suspense>
      </main>
    </div>
  );
}
