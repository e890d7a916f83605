import { useAtom } from 'jotai';
import { useEffect, useRef, useState, type ReactElement } from 'react';
import { accountDeletedNoticeAtom } from '../../atoms/accountData';
import { authTabFromSearch, hrefWithAuthTab, type AuthTab } from '../../atoms/viewUrl';
import { Icon } from '../../components/Icon';
import { AuthDialog } from './AuthDialog';
import { LandingFeatures } from './LandingFeatures';
import { LandingFooter } from './LandingFooter';
import { LandingHero } from './LandingHero';
import { LandingPricing } from './LandingPricing';
import { LandingPromo } from './LandingPromo';
import { LandingTestimonials } from './LandingTestimonials';
import { TryItSection } from './TryItSection';
import './landing.css';

/** The signed-out page. `?auth=signup|signin` opens the auth dialog on that tab, and the dialog keeps it current. */
export function LandingPage(): ReactElement {
  const [authTab, setAuthTab] = useState<AuthTab | null>(() => authTabFromSearch(window.location.search));
  const [accountDeleted, setAccountDeleted] = useAtom(accountDeletedNoticeAtom);

  function openAuth(tab: AuthTab | null) {
    setAuthTab(tab);
    window.history.replaceState(null, '', hrefWithAuthTab(window.location.href, tab));
  }

  return (
    <div className="landing">
      <header className="landing-header">
        <a className="brand" href="/">
          <span className="brand-mark" aria-hidden="true">
            R
          </span>
          <span>Render Studio</span>
        </a>
        <nav className="landing-nav" aria-label="Page sections">
          <a href="#features">Features</a>
          <a href="#pricing">Pricing</a>
        </nav>
        <div className="landing-actions">
          <button type="button" className="button button-ghost" onClick={() => openAuth('signin')}>
            Sign in
          </button>
          <button type="button" className="button button-primary" onClick={() => openAuth('signup')}>
            Get started
          </button>
        </div>
      </header>

      <main>
        {accountDeleted && <AccountDeletedNotice onDismiss={() => setAccountDeleted(false)} />}
        <LandingHero onStart={() => openAuth('signup')} />
        <LandingPromo />
        <LandingFeatures />
        <LandingTestimonials />
        <TryItSection onSignUp={() => openAuth('signup')} />
        <LandingPricing onChoose={() => openAuth('signup')} />
      </main>

      <LandingFooter />

      {authTab && (
        <AuthDialog
          tab={authTab}
          onTabChange={openAuth}
          onClose={() => openAuth(null)}
          onAuthenticated={() => {
            setAccountDeleted(false);
            window.history.replaceState(null, '', hrefWithAuthTab(window.location.href, null));
          }}
        />
      )}
    </div>
  );
}

/**
 * After this tab deleted its account the dashboard is gone at once: the landing page says what happened, and takes
 * the focus so a screen reader starts there rather than at the top of an unexplained page.
 */
function AccountDeletedNotice({ onDismiss }: { onDismiss: () => void }): ReactElement {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div ref={ref} className="landing-notice" role="status" tabIndex={-1} aria-labelledby="account-deleted-title">
      <div>
        <h2 id="account-deleted-title">Your account was deleted</h2>
        <p>Your projects, renders, images, clips, videos, data exports and credit history have been removed, and you have been signed out.</p>
      </div>
      <button type="button" className="icon-button" aria-label="Dismiss" onClick={onDismiss}>
        <Icon name="close" size={18} />
      </button>
    </div>
  );
}
