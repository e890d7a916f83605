import { useState, type ReactElement } from 'react';
import { ACCOUNT_SECURITY_MSG } from '../../../../domain/accountSecurity';
import { resendVerification } from '../../api/accountSecurity';
import { apiErrorMessage } from '../../api/client';

/** For an account whose e-mail is not verified yet: what that means, and "Resend" for a fresh link (3 an hour). */
export function VerifyEmailBanner(): ReactElement {
  const [status, setStatus] = useState<{ kind: 'sent' | 'error'; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function resend() {
    setBusy(true);
    try {
      setStatus({ kind: 'sent', message: await resendVerification() });
    } catch (err) {
      setStatus({ kind: 'error', message: apiErrorMessage(err, 'Something went wrong. Please try again.') });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="notice-info verify-banner" aria-label="Verify your e-mail address">
      <p>{ACCOUNT_SECURITY_MSG.banner}</p>
      {status && (
        <p role={status.kind === 'error' ? 'alert' : 'status'} className={status.kind === 'error' ? 'form-error' : undefined}>
          {status.message}
        </p>
      )}
      <div className="notice-actions">
        <button type="button" className="button button-secondary" onClick={() => void resend()} disabled={busy}>
          {busy ? 'Sending...' : 'Resend'}
        </button>
      </div>
    </section>
  );
}
