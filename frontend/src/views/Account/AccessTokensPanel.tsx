import { useSetAtom } from 'jotai';
import { useCallback, useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { ACCESS_TOKEN_MAX_DAYS, ACCESS_TOKEN_MSG, ACCESS_TOKEN_NAME_MAX, TOKEN_SCOPE_LABELS, TOKEN_SCOPES, type TokenScope } from '../../../../domain/accessTokens';
import { createAccessToken, fetchAccessTokens, revokeAccessToken, type AccessToken, type CreatedAccessToken } from '../../api/accessTokens';
import { apiErrorMessage } from '../../api/client';
import { showToastAtom } from '../../atoms/toast';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import './accessTokens.css';

const SOMETHING_WENT_WRONG = 'Something went wrong. Please try again.';
/** The empty list, before the first token and after the last one was revoked alike (revoked tokens are not listed). */
export const NO_ACCESS_TOKENS = 'You have no access tokens. Create one above when a script or another tool needs to call the API.';
const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const DATE_TIME_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

type Load = { status: 'loading' } | { status: 'done'; tokens: AccessToken[] } | { status: 'error'; message: string };

/** `yyyy-mm-dd` of a day `days` from today, in the browser's time zone (what a date input takes). */
function dayFromToday(days: number): string {
  const d = new Date();
  d.setDate(d.getDate() + days);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The end of the chosen day in the browser's time zone: a token "expiring on" a day works through that day. */
function endOfDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y, m - 1, d, 23, 59, 59).toISOString();
}

function expiryText(token: AccessToken): string {
  if (!token.expiresAt) return 'No expiry';
  const when = DATE_FORMAT.format(new Date(token.expiresAt));
  return token.expired ? `Expired ${when}` : `Expires ${when}`;
}

/**
 * Account -> Security: personal access tokens for scripts and integrations (DESIGN.md "Integrations"). A new token is
 * shown once, with a copy button; the list shows what identifies each one and when and from where it was last used.
 */
export function AccessTokensPanel(): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [load, setLoad] = useState<Load>({ status: 'loading' });
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<TokenScope[]>(['read']);
  const [expiresOn, setExpiresOn] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedAccessToken | null>(null);
  const [revoking, setRevoking] = useState<AccessToken | null>(null);

  const reload = useCallback(async () => {
    try {
      setLoad({ status: 'done', tokens: await fetchAccessTokens() });
    } catch (err) {
      setLoad({ status: 'error', message: apiErrorMessage(err, SOMETHING_WENT_WRONG) });
    }
  }, []);

  useEffect(() => {
    void reload();
  }, [reload]);

  function toggleScope(scope: TokenScope, on: boolean) {
    setScopes((current) => (on ? TOKEN_SCOPES.filter((s) => s === scope || current.includes(s)) : current.filter((s) => s !== scope)));
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!name.trim()) return setError(ACCESS_TOKEN_MSG.nameRequired);
    if (scopes.length === 0) return setError(ACCESS_TOKEN_MSG.scopesRequired);
    setBusy(true);
    setError(null);
    try {
      const answer = await createAccessToken({ name: name.trim(), scopes, expiresAt: expiresOn ? endOfDay(expiresOn) : null });
      setCreated(answer);
      setName('');
      setScopes(['read']);
      setExpiresOn('');
      await reload();
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    } finally {
      setBusy(false);
    }
  }

  async function copy(token: string) {
    try {
      await navigator.clipboard.writeText(token);
      toast({ kind: 'success', message: 'Copied to clipboard!' });
    } catch {
      toast({ kind: 'error', message: 'Could not copy: select the token and copy it yourself.' });
    }
  }

  async function revoke(token: AccessToken) {
    try {
      await revokeAccessToken(token.id);
      toast({ kind: 'success', message: `The token "${token.name}" was revoked.` });
      setRevoking(null);
      if (created?.accessToken.id === token.id) setCreated(null);
    } catch (err) {
      toast({ kind: 'error', message: `Could not revoke the token: ${apiErrorMessage(err, SOMETHING_WENT_WRONG)}` });
    } finally {
      await reload();
    }
  }

  const tokens = load.status === 'done' ? load.tokens : [];

  return (
    <>
      <section className="panel form-panel access-tokens-section" aria-labelledby="access-tokens-heading">
        <h2 id="access-tokens-heading">Access tokens</h2>
        <p className="muted access-tokens-lede">
          Let a script or another tool call the API as you: send the token as <code>Authorization: Bearer &lt;token&gt;</code>. It can do only
          what its scopes allow, in the workspaces you belong to and as your role there allows. A token never manages members, billing or tokens.
        </p>

        <form onSubmit={(e) => void submit(e)} aria-label="Create an access token">
          <TextField
            label="Token name"
            name="token-name"
            autoComplete="off"
            maxLength={ACCESS_TOKEN_NAME_MAX}
            value={name}
            hint="What it is for, e.g. Listing site upload"
            onChange={(e) => setName(e.target.value)}
          />
          <fieldset className="token-scopes">
            <legend>Scopes</legend>
            {TOKEN_SCOPES.map((scope) => (
              <label key={scope} className="token-scope">
                <input type="checkbox" name="token-scope" value={scope} checked={scopes.includes(scope)} onChange={(e) => toggleScope(scope, e.target.checked)} />
                <span>
                  <span className="token-scope-label">{TOKEN_SCOPE_LABELS[scope].label}</span> <code>{scope}</code>
                  <span className="muted token-scope-what">{TOKEN_SCOPE_LABELS[scope].description}</span>
                </span>
              </label>
            ))}
          </fieldset>
          <TextField
            label="Expires on (optional)"
            type="date"
            name="token-expiry"
            min={dayFromToday(1)}
            max={dayFromToday(ACCESS_TOKEN_MAX_DAYS - 1)}
            value={expiresOn}
            hint="Leave empty for a token that works until you revoke it."
            onChange={(e) => setExpiresOn(e.target.value)}
          />
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          <div className="form-actions">
            <button type="submit" className="button button-primary" disabled={busy}>
              {busy ? 'Creating...' : 'Create token'}
            </button>
          </div>
        </form>

        {created && (
          <div className="token-created" role="status">
            <p className="token-created-warning">
              <strong>Copy your new token now.</strong> It will not be shown again: only its first characters are kept to tell it apart.
            </p>
            <div className="token-created-value">
              <TextField label={`Token "${created.accessToken.name}"`} readOnly value={created.token} className="token-value" onFocus={(e) => e.currentTarget.select()} />
              <button type="button" className="button button-secondary" onClick={() => void copy(created.token)}>
                Copy token
              </button>
            </div>
            <div className="form-actions">
              <button type="button" className="button button-ghost" onClick={() => setCreated(null)}>
                Done
              </button>
            </div>
          </div>
        )}
      </section>

      <section className="panel access-tokens-section token-list-panel" aria-labelledby="token-list-heading">
        <h2 id="token-list-heading">Your tokens</h2>
        {load.status === 'loading' && <LoadingState label="Loading access tokens..." />}
        {load.status === 'error' && (
          <div role="alert" className="token-list-message">
            <p>{load.message}</p>
            <button type="button" className="button button-secondary" onClick={() => void reload()}>
              Try again
            </button>
          </div>
        )}
        {load.status === 'done' && tokens.length === 0 && <p className="muted">{NO_ACCESS_TOKENS}</p>}
        {tokens.length > 0 && (
          <ul className="token-list" aria-label="Access tokens">
            {tokens.map((token) => (
              <li key={token.id} className="token-row">
                <div className="token-who">
                  <p className="token-name">
                    {token.name} <code className="token-prefix">{token.prefix}…</code>
                  </p>
                  <p className="token-scopes-text">
                    {token.scopes.map((s) => (
                      <span key={s} className="token-scope-badge">
                        {s}
                      </span>
                    ))}
                  </p>
                  <p className="token-facts">
                    Created {DATE_FORMAT.format(new Date(token.createdAt))} ·{' '}
                    {token.lastUsedAt ? `Last used ${DATE_TIME_FORMAT.format(new Date(token.lastUsedAt))}${token.lastUsedIp ? ` from ${token.lastUsedIp}` : ''}` : 'Never used'} ·{' '}
                    <span className={token.expired ? 'token-expired' : undefined}>{expiryText(token)}</span>
                  </p>
                </div>
                <div className="token-controls">
                  <button type="button" className="button button-ghost" onClick={() => setRevoking(token)}>
                    Revoke<span className="visually-hidden"> the token {token.name}</span>
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>

      {revoking && (
        <ConfirmDeleteDialog title="Revoke access token" confirmLabel="Revoke" busyLabel="Revoking..." onCancel={() => setRevoking(null)} onConfirm={() => revoke(revoking)}>
          Revoke the token "{revoking.name}" ({revoking.prefix}…)? Anything that uses it stops working at once. This cannot be undone.
        </ConfirmDeleteDialog>
      )}
    </>
  );
}
