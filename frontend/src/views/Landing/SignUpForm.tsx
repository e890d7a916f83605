import { useSetAtom } from 'jotai';
import { useState, type FormEvent, type ReactElement } from 'react';
import { apiErrorMessage } from '../../api/client';
import { signUpAtom } from '../../atoms/session';
import { passwordStrength } from '../../components/passwordStrength';
import { TextField } from '../../components/TextField';

/** `initialEmail`: the address to sign up with, when known (an invitation names it). */
export function SignUpForm({ onSignedUp, initialEmail = '' }: { onSignedUp: () => void; initialEmail?: string }): ReactElement {
  const signUp = useSetAtom(signUpAtom);
  const [name, setName] = useState('');
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setError(null);
    if (!name.trim()) {
      setError('Name cannot be empty');
      return;
    }
    if (!passwordStrength(password).passes) {
      setError('Please fix the password requirements');
      return;
    }
    setBusy(true);
    try {
      await signUp({ name: name.trim(), email: email.trim(), password });
      onSignedUp();
    } catch (err) {
      setError(apiErrorMessage(err, 'Something went wrong. Please try again.'));
      setBusy(false);
    }
  }

  return (
    <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Sign up">
      <TextField label="Full name" name="name" autoComplete="name" required value={name} onChange={(e) => setName(e.target.value)} />
      <TextField label="Email" type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      <TextField
        label="Password"
        type="password"
        name="password"
        autoComplete="new-password"
        required
        minLength={8}
        hint="At least 8 characters, including a letter and a number."
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button button-primary button-block" disabled={busy}>
        {busy ? 'Creating account...' : 'Create account'}
      </button>
      <p className="auth-note">Free starting credits included. No card required.</p>
    </form>
  );
}
