import { useAtomValue, useSetAtom } from 'jotai';
import { lazy, Suspense, type ReactElement } from 'react';
import { reloadSessionAtom, sessionAtom } from './atoms/session';
import { LoadingState } from './components/Spinner';
import { Toaster } from './components/Toaster';
import { LandingPage } from './views/Landing/LandingPage';

// the landing page stays in the first chunk; the dashboard (and each of its views) loads on demand
const DashboardShell = lazy(() => import('./views/Dashboard/DashboardShell').then((m) => ({ default: m.DashboardShell })));

/** Signed out: the landing page. Signed in: the dashboard. The session decides, read once at start. */
export function App(): ReactElement {
  const session = useAtomValue(sessionAtom);
  const reload = useSetAtom(reloadSessionAtom);

  let screen: ReactElement;
  if (session === undefined) {
    screen = (
      <div className="page-center">
        <LoadingState label="Loading Render Studio..." />
      </div>
    );
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
  } else if (session.user) {
    screen = (
      <Suspense
        fallback={
          <div className="page-center">
            <LoadingState label="Loading Render Studio..." />
          </div>
        }
      >
        <DashboardShell user={session.user} />
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
