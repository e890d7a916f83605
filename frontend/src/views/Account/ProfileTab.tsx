import { useAtomValue, useSetAtom } from 'jotai';
import { useState, type FormEvent, type ReactElement } from 'react';
import { hasStatus, apiErrorMessage } from '../../api/client';
import type { Profile } from '../../api/profile';
import { profileStateAtom, reloadProfileAtom, saveProfileNameAtom } from '../../atoms/profile';
import { signOutAtom } from '../../atoms/session';
import { showToastAtom } from '../../atoms/toast';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'long' });

function ProfileForm({ profile }: { profile: Profile }): ReactElement {
  const save = useSetAtom(saveProfileNameAtom);
  const showToast = useSetAtom(showToastAtom);
  const [name, setName] = useState(profile.name);
  const [nameError, setNameError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!name.trim()) {
      setNameError('Name cannot be empty');
      return;
    }
    setNameError(null);
    setBusy(true);
    try {
      await save(name.trim());
      setName(name.trim());
      showToast({ kind: 'success', message: 'Saved successfully!' });
    } catch (error) {
      if (hasStatus(error, 400)) setNameError(apiErrorMessage(error, 'Failed to update profile'));
      showToast({ kind: 'error', message: 'Failed to update profile' });
    } finally {
      setBusy(false);
    }
  }

  const unchanged = name.trim() === profile.name;
  return (
    <form className="panel form-panel" onSubmit={(e) => void submit(e)} aria-labelledby="profile-heading">
      <h2 id="profile-heading">Profile</h2>
      <TextField
        label="Full Name"
        name="name"
        autoComplete="name"
        value={name}
        error={nameError}
        onChange={(e) => {
          setName(e.target.value);
          if (nameError) setNameError(null);
        }}
      />
      <TextField label="Email" type="email" value={profile.email} readOnly hint="Contact support to change your email address" />
      <dl className="facts">
        <div>
          <dt>Member since</dt>
          <dd>{DATE_FORMAT.format(new Date(profile.createdAt))}</dd>
        </div>
        <div>
          <dt>Email Status</dt>
          <dd>
            <span className="pill pill-success">Verified</span>
          </dd>
        </div>
      </dl>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy || unchanged}>
          {busy ? 'Saving...' : 'Save changes'}
        </button>
      </div>
    </form>
  );
}

/** 001 section 8: the account has no profile (its setup did not finish); signing in again sets it up. */
export const PROFILE_SETUP_FAILED = 'Profile setup failed. Please try signing out and back in.';

export function ProfileTab(): ReactElement {
  const profile = useAtomValue(profileStateAtom);
  const reload = useSetAtom(reloadProfileAtom);
  const signOut = useSetAtom(signOutAtom);
  if (profile === undefined) return <LoadingState label="Loading profile..." />;
  if (!profile.ok && hasStatus(profile.error, 404)) {
    return (
      <div className="panel error-panel" role="alert">
        <p>{PROFILE_SETUP_FAILED}</p>
        <button type="button" className="button button-secondary" onClick={() => void signOut()}>
          Sign Out
        </button>
      </div>
    );
  }
  if (!profile.ok || !profile.data) {
    return (
      <div className="panel error-panel" role="alert">
        <p>We couldn't load your profile. Please try again.</p>
        <button type="button" className="button button-secondary" onClick={() => reload()}>
          Retry
        </button>
      </div>
    );
  }
  // keyed by the saved name so a reload after saving starts the form from the server's value
  return <ProfileForm key={`${profile.data.id}:${profile.data.name}`} profile={profile.data} />;
}
