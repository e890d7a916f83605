import { useSetAtom } from 'jotai';
import { useState, type FormEvent, type ReactElement } from 'react';
import type { SecondStepNeeded } from '../../api/auth';
import { apiErrorMessage, isApiHttpError } from '../../api/client';
import { completeSecondStep } from '../../api/twoFactor';
import { signedInAtom } from '../../atoms/session';
import { TextField } from '../../components/TextField';
import { TWO_FACTOR_CODES } from '../../../../domain/twoFactor';
import { passkeyErrorMessage } from '../../components/passkeyErrors';

/**
 * The second step of a sign-in: a code from the authenticator app, a recovery code, or a passkey. No session exists
 * until it is done; an expired step sends the person back to their password.
 */
export function SecondStepForm({ step, onSignedIn, onExpired }: { step: SecondStepNeeded; onSignedIn: () => void; onExpired: (message: string) => void }): ReactElement {
  const signedIn = useSetAtom(signedInAtom);
  const hasApp = step.methods.includes('totp');
  const hasPasskey = step.methods.includes('passkey');
  const [mode, setMode] = useState<'totp' | 'recovery'>(hasApp ? 'totp' : 'recovery');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function prove(proof: Parameters<typeof completeSecondStep>[1]) {
    setBusy(true);
    setError(null);
    try {
      await completeSecondStep(step.pendingToken, proof);
      await signedIn();
      onSignedIn();
    } catch (err) {
      setBusy(false);
      if (isApiHttpError(err) && err.code === TWO_FACTOR_CODES.pendingInvalid) return onExpired(err.apiMessage);
      setError(proof === 'passkey' ? passkeyErrorMessage(err) : apiErrorMessage(err, 'Something went wrong. Please try again.'));
    }
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    void prove({ method: mode, code: code.trim() });
  }

  return (
    <form className="auth-form" onSubmit={submit} aria-label="Two-factor sign-in">
      <p>{mode === 'totp' ? 'Enter the 6-digit code from your authenticator app.' : 'Enter one of your recovery codes. Each works once.'}</p>
      {(hasApp || mode === 'recovery') && (
        <TextField
          key={mode}
          label={mode === 'totp' ? 'Authentication code' : 'Recovery code'}
          name={mode === 'totp' ? 'otp' : 'recovery-code'}
          inputMode={mode === 'totp' ? 'numeric' : 'text'}
          autoComplete="one-time-code"
          autoFocus
          required
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button button-primary button-block" disabled={busy || code.trim() === ''}>
        {busy ? 'Verifying...' : 'Verify'}
      </button>
      {hasPasskey && (
        <button type="button" className="button button-secondary button-block" disabled={busy} onClick={() => void prove('passkey')}>
          Use a passkey
        </button>
      )}
      <p className="auth-note">
        {mode === 'totp' ? (
          <button type="button" className="link-button" onClick={() => { setMode('recovery'); setCode(''); setError(null); }}>
            Use a recovery code instead
          </button>
        ) : hasApp ? (
          <button type="button" className="link-button" onClick={() => { setMode('totp'); setCode(''); setError(null); }}>
            Use your authenticator app instead
          </button>
        ) : null}
      </p>
    </form>
  );
}
