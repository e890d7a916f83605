import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import type { SsoProviderSummary } from '../../../../domain/singleSignOn';
import { WORKSPACE_SSO_MSG } from '../../../../domain/singleSignOn';
import { apiErrorMessage } from '../../api/client';
import { fetchSsoProviders, lookupSso, SSO_START_URL, ssoStartUrlFor } from '../../api/singleSignOn';
import { TextField } from '../../components/TextField';

/**
 * "Sign in with <name>" for the installation's identity provider, and "Sign in with SSO": a work address whose
 * domain a workspace set up single sign-on for goes to that workspace's provider.
 */
export function SsoSignInButtons(): ReactElement {
  const [providers, setProviders] = useState<SsoProviderSummary[]>([]);
  const [asking, setAsking] = useState(false);
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

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

  async function continueWithSso(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const found = await lookupSso(email.trim());
      if (!found.provider) {
        setError(WORKSPACE_SSO_MSG.noProviderForEmail);
        setBusy(false);
        return;
      }
      window.location.assign(ssoStartUrlFor(email.trim()));
    } catch (err) {
      setError(apiErrorMessage(err, 'Something went wrong. Please try again.'));
      setBusy(false);
    }
  }

  return (
    <div className="sso-sign-in">
      <p className="auth-note">or</p>
      {providers.map((p) => (
        <a key={p.id} className="button button-secondary button-block" href={SSO_START_URL}>
          Sign in with {p.name}
        </a>
      ))}
      {asking ? (
        <form className="auth-form" onSubmit={(e) => void continueWithSso(e)} aria-label="Sign in with SSO">
          <TextField label="Work email" type="email" name="sso-email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="button button-secondary button-block" disabled={busy}>
            {busy ? 'Finding your sign-in...' : 'Continue with SSO'}
          </button>
        </form>
      ) : (
        <button type="button" className="button button-secondary button-block" onClick={() => setAsking(true)}>
          Sign in with SSO
        </button>
      )}
    </div>
  );
}
