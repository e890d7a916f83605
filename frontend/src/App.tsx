import { useAtomValue, useSetAtom } from 'jotai';
import { lazy, Suspense, useState, type ReactElement } from 'react';
import { inviteTokenAtom } from './atoms/invite';
import { reloadSessionAtom, sessionAtom } from './atoms/session';
import { workspaceParamAtom } from './atoms/view';
import { LoadingState } from './components/Spinner';
import { Toaster } from './components/Toaster';
import { LandingPage } from './views/Landing/LandingPage';
import { AccountLinkPage, accountLinkFromSearch } from './views/AccountLinks/AccountLinkPage';

// the landing page stays in the first chunk; the dashboard (and each of its views) loads on demand
const DashboardShell = lazy(() => import('./views/Dashboard/DashboardShell').then((m) => ({ default: m.DashboardShell })));
// reached from an invitation link, signed in or out
const InvitationPage = lazy(() => import('./views/Invitation/InvitationPage').then((m) => ({ default: m.InvitationPage })));

function Loading(): ReactElement {
  return (
    <div className="page-center">
      <LoadingState label="Loading Render Studio..." />
    </div>
  );
}

/**
 * Signed out: the landing page. Signed in: the dashboard, one per workspace (a switch starts the dashboard afresh:
 * no open project, selection or stream of the previous workspace survives). An invitation link shows its page
 * either way. The session decides, read once at start.
 */
export function App(): ReactElement {
  const session = useAtomValue(sessionAtom);
  const reload = useSetAtom(reloadSessionAtom);
  const inviteToken = useAtomValue(inviteTokenAtom);
  const workspaceId = useAtomValue(workspaceParamAtom);
  // a password reset or verification link (or "Forgot password?"): its page, signed in or out
  const [accountLink] = useState(() => accountLinkFromSearch(window.location.search));

  let screen: ReactElement;
  if (accountLink) {
    screen = <AccountLinkPage link={accountLink} />;
  } else if (session === undefined) {
    screen = <Loading />;
  } else if (session.failed) {
    screen = (
      <div className="page-center">
        <div className="panel error-panel" role="alert">
          <h1>We can't reach Render Studio</h1>
          <p>Check your connection and try again.</p>
          <button type="button" className="button button-primary" onClick={() => void reload()}>
            Retry
          </button>
        </div>
      </div>
    );
  } else if (inviteToken) {
    screen = (
      <Suspense fallback={<Loading />}>
        <InvitationPage token={inviteToken} user={session.user} />
      </Suspense>
    );
  } else if (session.user) {
    screen = (
      <Suspense fallback={<Loading />}>
        <DashboardShell key={workspaceId ?? session.user.id} user={session.user} />
      </Suspense>
    );
  } else {
    screen = <LandingPage />;
  }

  return (
    <>
      {screen}
      <Toaster />
    </>
  );
}
