import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { confirmPasswordReset, requestPasswordReset, verifyEmail } from '../../api/accountSecurity';
import { apiErrorMessage } from '../../api/client';
import { PasswordStrengthMeter } from '../../components/PasswordStrengthMeter';
import { passwordStrength } from '../../components/passwordStrength';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';

const SOMETHING_WENT_WRONG = 'Something went wrong. Please try again.';
const METER_ID = 'reset-password-strength';

/** What an account e-mail's link opens: `?auth=reset` (ask for a link), `?auth=reset&token=` (new password), `?verify=`. */
export type AccountLink = { kind: 'forgot' } | { kind: 'reset'; token: string } | { kind: 'verify'; token: string };

export function accountLinkFromSearch(search: string): AccountLink | null {
  const params = new URLSearchParams(search);
  const verify = params.get('verify');
  if (verify) return { kind: 'verify', token: verify };
  if (params.get('auth') !== 'reset') return null;
  const token = params.get('token');
  return token ? { kind: 'reset', token } : { kind: 'forgot' };
}

function Frame({ title, children }: { title: string; children: ReactElement | ReactElement[] }): ReactElement {
  return (
    <main className="page-center" id="main">
      <section className="panel form-panel account-link-panel" aria-labelledby="account-link-title">
        <h1 id="account-link-title">{title}</h1>
        {children}
      </section>
    </main>
  );
}

function ForgotPassword(): ReactElement {
  const [email, setEmail] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setDone(await requestPasswordReset(email.trim()));
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Frame title="Reset your password">
      {done ? (
        <p role="status">{done}</p>
      ) : (
        <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Reset your password">
          <p>Enter the e-mail address of your account and we will send you a link to choose a new password.</p>
          <TextField label="Email" type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="button button-primary button-block" disabled={busy}>
            {busy ? 'Sending...' : 'Send reset link'}
          </button>
        </form>
      )}
      <p>
        <a href="/?auth=signin">Back to sign in</a>
      </p>
    </Frame>
  );
}

function NewPassword({ token }: { token: string }): ReactElement {
  const [password, setPassword] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const strength = passwordStrength(password);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!strength.passes) return;
    setBusy(true);
    setError(null);
    try {
      setDone(await confirmPasswordReset(token, password));
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Frame title="Choose a new password">
      {done ? (
        <p role="status">{done}</p>
      ) : (
        <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Choose a new password">
          <TextField
            label="New password"
            type="password"
            name="newPassword"
            autoComplete="new-password"
            required
            value={password}
            describedBy={METER_ID}
            onChange={(e) => setPassword(e.target.value)}
          />
          <PasswordStrengthMeter id={METER_ID} strength={strength} />
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="button button-primary button-block" disabled={busy || !strength.passes}>
            {busy ? 'Saving...' : 'Set new password'}
          </button>
        </form>
      )}
      <p>
        <a href="/?auth=signin">Sign in</a>
      </p>
    </Frame>
  );
}

function VerifyEmail({ token }: { token: string }): ReactElement {
  const [state, setState] = useState<{ status: 'loading' } | { status: 'done' | 'error'; message: string }>({ status: 'loading' });
  useEffect(() => {
    let current = true;
    verifyEmail(token)
      .then((answer) => current && setState({ status: 'done', message: answer.message }))
      .catch((err: unknown) => current && setState({ status: 'error', message: apiErrorMessage(err, SOMETHING_WENT_WRONG) }));
    return () => {
      current = false;
    };
  }, [token]);
  return (
    <Frame title="Verify your e-mail address">
      {state.status === 'loading' ? (
        <LoadingState label="Verifying..." />
      ) : (
        <p role={state.status === 'error' ? 'alert' : 'status'} className={state.status === 'error' ? 'form-error' : undefined}>
          {state.message}
        </p>
      )}
      <p>
        <a href="/">Continue to Render Studio</a>
      </p>
    </Frame>
  );
}

/** The page an account e-mail's link (or "Forgot password?") opens, signed in or out. */
export function AccountLinkPage({ link }: { link: AccountLink }): ReactElement {
  if (link.kind === 'verify') return <VerifyEmail token={link.token} />;
  if (link.kind === 'reset') return <NewPassword token={link.token} />;
  return <ForgotPassword />;
}
