import { useState, type FormEvent, type ReactElement } from 'react';
import { changeEmail } from '../../api/accountSecurity';
import { apiErrorMessage } from '../../api/client';
import { TextField } from '../../components/TextField';

/** Account → Security: a new e-mail address takes effect once the link sent to it is opened; the old one is told. */
export function EmailChangePanel(): ReactElement {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await changeEmail(email.trim(), password));
      setEmail('');
      setPassword('');
    } catch (err) {
      setError(apiErrorMessage(err, 'Something went wrong. Please try again.'));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="panel form-panel" onSubmit={(e) => void submit(e)} aria-labelledby="email-change-heading">
      <h2 id="email-change-heading">Change e-mail address</h2>
      <TextField label="New e-mail address" type="email" name="newEmail" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      <TextField
        label="Password"
        type="password"
        name="emailChangePassword"
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
      {done && <p role="status">{done}</p>}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Sending...' : 'Send confirmation link'}
        </button>
      </div>
    </form>
  );
}
