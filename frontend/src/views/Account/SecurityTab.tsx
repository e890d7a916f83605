import { useSetAtom } from 'jotai';
import { useState, type FormEvent, type ReactElement } from 'react';
import { apiErrorMessage } from '../../api/client';
import { changePasswordAtom } from '../../atoms/profile';
import { showToastAtom } from '../../atoms/toast';
import { PasswordStrengthMeter } from '../../components/PasswordStrengthMeter';
import { passwordStrength } from '../../components/passwordStrength';
import { TextField } from '../../components/TextField';
import { AccessTokensPanel } from './AccessTokensPanel';
import { SessionsPanel } from './SessionsPanel';
import { EmailChangePanel } from './EmailChangePanel';
import { TwoFactorPanel } from './TwoFactorPanel';

const METER_ID = 'new-password-strength';

export function SecurityTab(): ReactElement {
  const changePassword = useSetAtom(changePasswordAtom);
  const showToast = useSetAtom(showToastAtom);
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [confirmPassword, setConfirmPassword] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // field errors wait until the user leaves the field, so typing is not met with red text at every key
  const [touched, setTouched] = useState({ newPassword: false, confirmPassword: false });

  const strength = passwordStrength(newPassword);
  const mismatch = confirmPassword.length > 0 && confirmPassword !== newPassword;
  const showStrengthError = newPassword.length > 0 && !strength.passes && touched.newPassword;
  const showMismatch = mismatch && (touched.confirmPassword || confirmPassword.length >= newPassword.length);
  const canSubmit = currentPassword.length > 0 && strength.passes && newPassword === confirmPassword && !busy;

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!canSubmit) return;
    setBusy(true);
    setFormError(null);
    try {
      await changePassword({ currentPassword, newPassword, confirmPassword });
      setCurrentPassword('');
      setNewPassword('');
      setConfirmPassword('');
      setTouched({ newPassword: false, confirmPassword: false });
      showToast({ kind: 'success', message: 'Password updated' });
    } catch (error) {
      const reason = apiErrorMessage(error, error instanceof Error ? error.message : 'Something went wrong. Please try again.');
      const message = `Failed to update password: ${reason}`;
      setFormError(message);
      showToast({ kind: 'error', message });
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <form className="panel form-panel" onSubmit={(e) => void submit(e)} aria-labelledby="password-heading">
        <h2 id="password-heading">Change Password</h2>
        <TextField
          label="Current password"
          type="password"
          name="currentPassword"
          autoComplete="current-password"
          value={currentPassword}
          onChange={(e) => setCurrentPassword(e.target.value)}
        />
        <TextField
          label="New password"
          type="password"
          name="newPassword"
          autoComplete="new-password"
          value={newPassword}
          describedBy={METER_ID}
          error={showStrengthError ? 'Please fix the password requirements' : null}
          onBlur={() => setTouched((t) => ({ ...t, newPassword: true }))}
          onChange={(e) => setNewPassword(e.target.value)}
        />
        <PasswordStrengthMeter id={METER_ID} strength={strength} />
        <TextField
          label="Confirm new password"
          type="password"
          name="confirmPassword"
          autoComplete="new-password"
          value={confirmPassword}
          error={showMismatch ? 'Passwords do not match' : null}
          onBlur={() => setTouched((t) => ({ ...t, confirmPassword: true }))}
          onChange={(e) => setConfirmPassword(e.target.value)}
        />
        {formError && (
          <p className="form-error" role="alert">
            {formError}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={!canSubmit}>
            {busy ? 'Updating...' : 'Update password'}
          </button>
        </div>
      </form>
      <TwoFactorPanel />
      <EmailChangePanel />
      <SessionsPanel />
      <AccessTokensPanel />
    </>
  );
}
