import { useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import type { WorkspaceSsoSettings } from '../../../../domain/singleSignOn';
import { fetchWorkspaceSso, removeWorkspaceSso, saveWorkspaceSso } from '../../api/singleSignOn';
import { apiErrorMessage } from '../../api/client';
import { showToastAtom } from '../../atoms/toast';
import { TextField } from '../../components/TextField';
import { useFormSubmit } from '../../components/useFormSubmit';
import { SOMETHING_WENT_WRONG } from '../../components/useLoad';

export const SSO_REQUIRE_HINT =
  "People with these addresses then sign in only through your identity provider: their password sign-ins and password sessions end. The workspace's owners keep their password, so a broken provider never locks you out.";
export const SSO_DOMAINS_HINT = 'Separate with commas. You can add a domain only if your own verified e-mail address is at it; public mail services such as gmail.com cannot be added.';

interface FormState {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  displayName: string;
  domains: string;
  ssoRequired: boolean;
}

const EMPTY: FormState = { issuerUrl: '', clientId: '', clientSecret: '', displayName: '', domains: '', ssoRequired: false };

function formOf(saved: WorkspaceSsoSettings | null): FormState {
  if (!saved) return EMPTY;
  return { issuerUrl: saved.issuerUrl, clientId: saved.clientId, clientSecret: '', displayName: saved.displayName, domains: saved.domains.join(', '), ssoRequired: saved.ssoRequired };
}

/**
 * A team workspace's single sign-on with OpenID Connect (admins and owners): the identity provider, the e-mail
 * domains that sign in through it, and whether those domains must. The client secret is write-only.
 */
export function SingleSignOnPanel({ workspaceId }: { workspaceId: string }): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [saved, setSaved] = useState<WorkspaceSsoSettings | null | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [form, setForm] = useState<FormState>(EMPTY);
  const [removing, setRemoving] = useState(false);

  useEffect(() => {
    let current = true;
    fetchWorkspaceSso(workspaceId)
      .then((sso) => {
        if (!current) return;
        setSaved(sso);
        setForm(formOf(sso));
      })
      .catch((err: unknown) => current && setLoadError(apiErrorMessage(err, SOMETHING_WENT_WRONG)));
    return () => {
      current = false;
    };
  }, [workspaceId]);

  const { busy, error, submit } = useFormSubmit(
    () =>
      saveWorkspaceSso(workspaceId, {
        issuerUrl: form.issuerUrl.trim(),
        clientId: form.clientId.trim(),
        ...(form.clientSecret !== '' ? { clientSecret: form.clientSecret } : {}),
        displayName: form.displayName.trim(),
        domains: form.domains.split(/[,\s]+/).filter((d) => d !== ''),
        ssoRequired: form.ssoRequired,
      }),
    (answer) => {
      setSaved(answer.sso);
      setForm(formOf(answer.sso));
      const ended = answer.endedSessions > 0 ? ` ${answer.endedSessions} password ${answer.endedSessions === 1 ? 'session was' : 'sessions were'} signed out.` : '';
      toast({ kind: 'success', message: `Single sign-on saved.${ended}` });
    },
  );

  async function remove() {
    setRemoving(true);
    try {
      await removeWorkspaceSso(workspaceId);
      setSaved(null);
      setForm(EMPTY);
      toast({ kind: 'success', message: 'Single sign-on removed. Passwords work again for these domains.' });
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, SOMETHING_WENT_WRONG) });
    } finally {
      setRemoving(false);
    }
  }

  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setForm((f) => ({ ...f, [key]: value }));

  return (
    <section className="panel form-panel" aria-labelledby="single-sign-on-title">
      <h2 id="single-sign-on-title">Single sign-on</h2>
      {loadError && (
        <p className="form-error" role="alert">
          {loadError}
        </p>
      )}
      {saved === undefined && !loadError && <p className="field-hint">Loading...</p>}
      {saved !== undefined && (
        <form onSubmit={submit} aria-label="Single sign-on">
          <p className="field-hint sso-intro">
            Let people sign in with your company&apos;s OpenID Connect identity provider (Okta, Microsoft Entra ID, Google Workspace, Keycloak...). Register this redirect URI there:{' '}
            <code className="sso-redirect-uri">{saved?.redirectUri ?? `${window.location.origin}/api/auth/sso/callback`}</code>
          </p>
          <TextField label="Issuer URL" name="sso-issuer" type="url" required placeholder="https://login.example.com" value={form.issuerUrl} onChange={(e) => set('issuerUrl', e.target.value)} />
          <TextField label="Client ID" name="sso-client-id" required autoComplete="off" value={form.clientId} onChange={(e) => set('clientId', e.target.value)} />
          <TextField
            label="Client secret"
            name="sso-client-secret"
            type="password"
            autoComplete="new-password"
            required={!saved}
            placeholder={saved ? 'Set: leave empty to keep it' : ''}
            value={form.clientSecret}
            onChange={(e) => set('clientSecret', e.target.value)}
            hint={saved ? 'The secret is stored encrypted and never shown again.' : undefined}
          />
          <TextField label="Button name" name="sso-name" required placeholder="Acme Okta" maxLength={60} value={form.displayName} onChange={(e) => set('displayName', e.target.value)} hint='The sign-in page shows "Sign in with" this name.' />
          <TextField label="E-mail domains" name="sso-domains" required placeholder="acme.com" value={form.domains} onChange={(e) => set('domains', e.target.value)} hint={SSO_DOMAINS_HINT} />
          <div className="field">
            <label className="checkbox-label">
              <input type="checkbox" name="sso-required" checked={form.ssoRequired} aria-describedby="sso-required-hint" onChange={(e) => set('ssoRequired', e.target.checked)} />
              Require single sign-on for these domains
            </label>
            <p id="sso-required-hint" className="field-hint">
              {SSO_REQUIRE_HINT}
            </p>
          </div>
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          <div className="form-actions">
            <button type="submit" className="button button-primary" disabled={busy}>
              {busy ? 'Checking the provider...' : 'Save single sign-on'}
            </button>
            {saved && (
              <button type="button" className="button button-secondary" disabled={removing || busy} onClick={() => void remove()}>
                {removing ? 'Removing...' : 'Remove single sign-on'}
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
