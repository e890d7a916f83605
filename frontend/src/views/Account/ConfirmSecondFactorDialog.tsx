import { useState, type FormEvent, type ReactElement } from 'react';
import { confirmSecondFactor } from '../../api/twoFactor';
import { Dialog } from '../../components/Dialog';
import { passkeyErrorMessage } from '../../components/passkeyErrors';
import { TextField } from '../../components/TextField';

/**
 * "Confirm it's you": turning two-factor sign-in off, removing a factor or making new recovery codes needs a second
 * factor proved in the last 10 minutes. A code from the app or a recovery code, or one of the account's passkeys.
 */
export function ConfirmSecondFactorDialog({ hasApp, hasPasskey, onConfirmed, onClose }: { hasApp: boolean; hasPasskey: boolean; onConfirmed: () => void; onClose: () => void }): ReactElement {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function prove(proof: Parameters<typeof confirmSecondFactor>[0]) {
    setBusy(true);
    setError(null);
    try {
      await confirmSecondFactor(proof);
      onConfirmed();
    } catch (err) {
      setError(passkeyErrorMessage(err));
      setBusy(false);
    }
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = code.trim();
    // six digits are the app's code; anything longer is a recovery code
    void prove({ method: /^\d{6}$/.test(value) ? 'totp' : 'recovery', code: value });
  }

  return (
    <Dialog title="Confirm it's you" onClose={onClose}>
      <form className="form-panel" onSubmit={submit} aria-label="Confirm it's you">
        <p>{hasApp ? 'Enter a code from your authenticator app or one of your recovery codes.' : 'Enter one of your recovery codes, or use a passkey.'}</p>
        <TextField label={hasApp ? 'Code or recovery code' : 'Recovery code'} name="confirm-code" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} />
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy || code.trim() === ''}>
            {busy ? 'Checking...' : 'Confirm'}
          </button>
          {hasPasskey && (
            <button type="button" className="button button-secondary" disabled={busy} onClick={() => void prove('passkey')}>
              Use a passkey
            </button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
