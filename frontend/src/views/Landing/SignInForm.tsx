import { useSetAtom } from 'jotai';
import { useState, type FormEvent, type ReactElement } from 'react';
import { apiErrorMessage } from '../../api/client';
import { signInAtom } from '../../atoms/session';
import { TextField } from '../../components/TextField';

export function SignInForm({ onSignedIn, initialEmail = '' }: { onSignedIn: () => void; initialEmail?: string }): ReactElement {
  const signIn = useSetAtom(signInAtom);
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn({ email: email.trim(), password });
      onSignedIn();
    } catch (err) {
      setError(apiErrorMessage(err, 'Something went wrong. Please try again.'));
      setBusy(false);
    }
  }

  return (
    <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Sign in">
      <TextField label="Email" type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
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
      <p className="auth-note">
        <a href="/?auth=reset">Forgot password?</a>
      </p>
    </form>
  );
}
