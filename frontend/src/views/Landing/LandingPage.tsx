import { useState, type ReactElement } from 'react';
import { authTabFromSearch, hrefWithAuthTab, type AuthTab } from '../../atoms/viewUrl';
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
          onAuthenticated={() => window.history.replaceState(null, '', hrefWithAuthTab(window.location.href, null))}
        />
      )}
    </div>
  );
}
