import { useEffect, useState, type ReactElement } from 'react';
import type { SsoProviderSummary } from '../../../../domain/singleSignOn';
import { fetchSsoProviders, SSO_START_URL } from '../../api/singleSignOn';

/** "Sign in with <name>" for each identity provider the installation offers; nothing when there is none. */
export function SsoSignInButtons(): ReactElement | null {
  const [providers, setProviders] = useState<SsoProviderSummary[]>([]);

  useEffect(() => {
    let current = true;
    fetchSsoProviders()
      .then((list) => current && setProviders(list))
      // without the list the password form still works: no buttons
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, []);

  if (providers.length === 0) return null;
  return (
    <div className="sso-sign-in">
      <p className="auth-note">or</p>
      {providers.map((p) => (
        <a key={p.id} className="button button-secondary button-block" href={SSO_START_URL}>
          Sign in with {p.name}
        </a>
      ))}
    </div>
  );
}
