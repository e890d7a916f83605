import { useSetAtom } from 'jotai';
import { useCallback, useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { apiErrorMessage, isApiHttpError } from '../../api/client';
import {
  addPasskey,
  beginTotpSetup,
  confirmTotpSetup,
  fetchTwoFactor,
  regenerateRecoveryCodes,
  removePasskey,
  removeTotp,
  renamePasskey,
  type PasskeyView,
  type TotpSetup,
  type TwoFactorStatus,
} from '../../api/twoFactor';
import { showToastAtom } from '../../atoms/toast';
import { passkeyErrorMessage, passkeysSupported } from '../../components/passkeyErrors';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { PASSKEY_NAME_MAX, TWO_FACTOR_CODES } from '../../../../domain/twoFactor';
import { ConfirmSecondFactorDialog } from './ConfirmSecondFactorDialog';
import { RecoveryCodesPanel } from './RecoveryCodesPanel';

const WHEN = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/**
 * Account → Security: two-factor sign-in. An authenticator app set up from a QR code, passkeys (several, named),
 * recovery codes shown once. Turning factors off asks the person to confirm with a second factor first.
 */
export function TwoFactorPanel(): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [status, setStatus] = useState<TwoFactorStatus | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState<string | null>(null);
  const [passkeyName, setPasskeyName] = useState('');
  const [passkeyError, setPasskeyError] = useState<string | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  /** an action that waits for "Confirm it's you" */
  const [pending, setPending] = useState<(() => Promise<void>) | null>(null);

  const load = useCallback(async () => {
    try {
      setStatus(await fetchTwoFactor());
      setLoadError(null);
    } catch (err) {
      setLoadError(apiErrorMessage(err, 'Could not load your two-factor settings.'));
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  /** Runs an action that needs a fresh second factor: asks for one first when the server says so. */
  async function withConfirmation(label: string, action: () => Promise<void>) {
    setBusy(label);
    try {
      await action();
      await load();
    } catch (err) {
      if (isApiHttpError(err) && err.code === TWO_FACTOR_CODES.freshFactorNeeded) {
        setPending(() => action);
      } else {
        toast({ kind: 'error', message: apiErrorMessage(err, 'Something went wrong. Please try again.') });
      }
    } finally {
      setBusy(null);
    }
  }

  async function startSetup() {
    setBusy('setup');
    try {
      setSetup(await beginTotpSetup());
      setCode('');
      setCodeError(null);
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, 'Could not start the set-up.') });
    } finally {
      setBusy(null);
    }
  }

  async function confirmSetup(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy('confirm');
    setCodeError(null);
    try {
      const recoveryCodes = await confirmTotpSetup(code.trim());
      setSetup(null);
      if (recoveryCodes) setCodes(recoveryCodes);
      toast({ kind: 'success', message: 'Authenticator app turned on' });
      await load();
    } catch (err) {
      setCodeError(apiErrorMessage(err, 'Could not check the code.'));
    } finally {
      setBusy(null);
    }
  }

  async function addKey(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy('passkey');
    setPasskeyError(null);
    try {
      const added = await addPasskey(passkeyName.trim());
      setPasskeyName('');
      if (added.recoveryCodes) setCodes(added.recoveryCodes);
      toast({ kind: 'success', message: `Passkey "${added.passkey.name}" added` });
      await load();
    } catch (err) {
      setPasskeyError(passkeyErrorMessage(err));
    } finally {
      setBusy(null);
    }
  }

  async function rename(passkey: PasskeyView) {
    const name = window.prompt('New name for this passkey', passkey.name)?.trim();
    if (!name || name === passkey.name) return;
    try {
      await renamePasskey(passkey.id, name.slice(0, PASSKEY_NAME_MAX));
      await load();
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, 'Could not rename the passkey.') });
    }
  }

  if (!status) {
    return (
      <section className="panel" aria-labelledby="two-factor-heading">
        <h2 id="two-factor-heading">Two-factor sign-in</h2>
        {loadError ? (
          <p className="form-error" role="alert">
            {loadError}
          </p>
        ) : (
          <LoadingState label="Loading two-factor settings..." />
        )}
      </section>
    );
  }

  return (
    <section className="panel" aria-labelledby="two-factor-heading">
      <h2 id="two-factor-heading">Two-factor sign-in</h2>
      <p>
        {status.enabled ? (
          <>
            <span className="pill pill-success">On</span> After your password, sign-in asks for a code from your authenticator app or a passkey.
          </>
        ) : (
          'Off. Add an authenticator app or a passkey so that a password alone cannot open your account.'
        )}
      </p>

      {codes && <RecoveryCodesPanel codes={codes} onDone={() => setCodes(null)} />}

      <h3>Authenticator app</h3>
      {status.totp ? (
        <div className="session-item">
          <p>An authenticator app is set up.</p>
          <button type="button" className="button button-secondary" disabled={busy !== null} onClick={() => void withConfirmation('totp', removeTotp)}>
            {busy === 'totp' ? 'Removing...' : 'Remove authenticator app'}
          </button>
        </div>
      ) : setup ? (
        <form className="form-panel" onSubmit={(e) => void confirmSetup(e)} aria-label="Set up an authenticator app">
          <p>Scan this QR code with your authenticator app, then enter the 6-digit code it shows.</p>
          <img className="totp-qr" src={setup.qrCode} alt="QR code for your authenticator app" width={240} height={240} />
          <p className="muted">
            Cannot scan it? Enter this key instead: <code className="totp-secret">{setup.secret}</code>
          </p>
          <TextField
            label="Code from the app"
            name="totp-code"
            inputMode="numeric"
            autoComplete="one-time-code"
            value={code}
            error={codeError}
            onChange={(e) => setCode(e.target.value)}
          />
          <div className="form-actions">
            <button type="submit" className="button button-primary" disabled={busy !== null || code.trim() === ''}>
              {busy === 'confirm' ? 'Checking...' : 'Turn on'}
            </button>
            <button type="button" className="button button-secondary" onClick={() => setSetup(null)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <button type="button" className="button button-secondary" disabled={busy !== null} onClick={() => void startSetup()}>
          {busy === 'setup' ? 'Starting...' : 'Set up an authenticator app'}
        </button>
      )}

      <h3>Passkeys</h3>
      {status.passkeys.length === 0 ? (
        <p className="muted">No passkeys yet. A passkey signs you in with your fingerprint, face or device PIN.</p>
      ) : (
        <ul className="session-list" aria-label="Passkeys">
          {status.passkeys.map((p) => (
            <li key={p.id} className="session-item">
              <div>
                <p>
                  <strong>{p.name}</strong>
                </p>
                <p className="muted">
                  Added {WHEN.format(new Date(p.createdAt))}
                  {p.lastUsedAt ? ` · Last used ${WHEN.format(new Date(p.lastUsedAt))}` : ' · Never used'}
                </p>
              </div>
              <div className="form-actions">
                <button type="button" className="button button-secondary" disabled={busy !== null} onClick={() => void rename(p)} aria-label={`Rename passkey ${p.name}`}>
                  Rename
                </button>
                <button
                  type="button"
                  className="button button-secondary"
                  disabled={busy !== null}
                  onClick={() => void withConfirmation(`passkey:${p.id}`, () => removePasskey(p.id))}
                  aria-label={`Remove passkey ${p.name}`}
                >
                  {busy === `passkey:${p.id}` ? 'Removing...' : 'Remove'}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {passkeysSupported() ? (
        <form className="form-panel" onSubmit={(e) => void addKey(e)} aria-label="Add a passkey">
          <TextField
            label="Passkey name"
            name="passkey-name"
            placeholder="e.g. Work laptop"
            maxLength={PASSKEY_NAME_MAX}
            value={passkeyName}
            error={passkeyError}
            onChange={(e) => setPasskeyName(e.target.value)}
          />
          <button type="submit" className="button button-secondary" disabled={busy !== null || passkeyName.trim() === ''}>
            {busy === 'passkey' ? 'Waiting for your passkey...' : 'Add a passkey'}
          </button>
        </form>
      ) : (
        <p className="muted">This browser cannot use passkeys.</p>
      )}

      {status.enabled && (
        <>
          <h3>Recovery codes</h3>
          <div className="session-item">
            <p>{status.recoveryCodesLeft === 1 ? '1 recovery code left.' : `${status.recoveryCodesLeft} recovery codes left.`}</p>
            <button
              type="button"
              className="button button-secondary"
              disabled={busy !== null}
              onClick={() => void withConfirmation('codes', async () => setCodes(await regenerateRecoveryCodes()))}
            >
              {busy === 'codes' ? 'Making codes...' : 'Make new recovery codes'}
            </button>
          </div>
        </>
      )}

      {pending && (
        <ConfirmSecondFactorDialog
          hasApp={status.totp}
          hasPasskey={status.passkeys.length > 0}
          onClose={() => setPending(null)}
          onConfirmed={() => {
            const action = pending;
            setPending(null);
            void withConfirmation('confirmed', action);
          }}
        />
      )}
    </section>
  );
}
