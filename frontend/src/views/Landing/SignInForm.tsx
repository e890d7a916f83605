import { useSetAtom } from 'jotai';
import { useState, type FormEvent, type ReactElement } from 'react';
import type { SecondStepNeeded } from '../../api/auth';
import { apiErrorMessage } from '../../api/client';
import { signInWithPasskey } from '../../api/twoFactor';
import { signedInAtom, signInAtom } from '../../atoms/session';
import { passkeyErrorMessage, passkeysSupported } from '../../components/passkeyErrors';
import { TextField } from '../../components/TextField';
import { SecondStepForm } from './SecondStepForm';

export function SignInForm({ onSignedIn, initialEmail = '' }: { onSignedIn: () => void; initialEmail?: string }): ReactElement {
  const signIn = useSetAtom(signInAtom);
  const signedIn = useSetAtom(signedInAtom);
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [secondStep, setSecondStep] = useState<SecondStepNeeded | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const step = await signIn({ email: email.trim(), password });
      if (step) {
        setSecondStep(step);
        setBusy(false);
        return;
      }
      onSignedIn();
    } catch (err) {
      setError(apiErrorMessage(err, 'Something went wrong. Please try again.'));
      setBusy(false);
    }
  }

  async function withPasskey() {
    setBusy(true);
    setError(null);
    try {
      await signInWithPasskey();
      await signedIn();
      onSignedIn();
    } catch (err) {
      setError(passkeyErrorMessage(err));
      setBusy(false);
    }
  }

  if (secondStep) {
    return (
      <SecondStepForm
        step={secondStep}
        onSignedIn={onSignedIn}
        onExpired={(message) => {
          setSecondStep(null);
          setPassword('');
          setError(message);
        }}
      />
    );
  }

  return (
    <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Sign in">
      <TextField label="Email" type="email" name="email" autoComplete="email webauthn" required value={email} onChange={(e) => setEmail(e.target.value)} />
      <TextField
        label="Password"
        type="password"
        name="password"
        autoComplete="current-password"
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button button-primary button-block" disabled={busy}>
        {busy ? 'Signing in...' : 'Sign in'}
      </button>
      {passkeysSupported() && (
        <>
          <p className="auth-note">Have a passkey? No e-mail or password needed.</p>
          <button type="button" className="button button-secondary button-block" disabled={busy} onClick={() => void withPasskey()}>
            Use a passkey
          </button>
        </>
      )}
      <p className="auth-note">
        <a href="/?auth=reset">Forgot password?</a>
      </p>
    </form>
  );
}
