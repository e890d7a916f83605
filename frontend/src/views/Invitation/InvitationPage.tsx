import { useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { ROLE_LABELS } from '../../../../domain/workspaceRoles';
import type { User } from '../../api/auth';
import { apiErrorMessage, isApiHttpError } from '../../api/client';
import { acceptInvitation, fetchInvitation, type InvitationPreview } from '../../api/workspaces';
import { leaveInvitationAtom } from '../../atoms/invite';
import { signOutAtom } from '../../atoms/session';
import { showToastAtom } from '../../atoms/toast';
import type { AuthTab } from '../../atoms/viewUrl';
import { LoadingState } from '../../components/Spinner';
import { AuthDialog } from '../Landing/AuthDialog';
import './invitation.css';

const SOMETHING_WENT_WRONG = 'Something went wrong. Please try again.';
const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

type Preview = { status: 'loading' } | { status: 'done'; invitation: InvitationPreview } | { status: 'error'; message: string; used: boolean };

/** The API's code for a link already used: signing in with the account that used it shows that it joined. */
const INVITATION_USED = 'INVITATION_USED';

/**
 * An invitation link (`?view=invite&token=...`), signed in or out: which workspace, who invited and with what role.
 * Signed out it offers sign-up (the invited e-mail filled in) and sign-in; signed in, Accept, which joins the
 * workspace and opens it. Unknown, expired, revoked or used links and a session with another e-mail get the API's
 * own words; a used link opened by the account that used it says it joined already and opens the workspace (signed
 * out, the used link offers that sign-in).
 */
export function InvitationPage({ token, user }: { token: string; user: User | null }): ReactElement {
  const leave = useSetAtom(leaveInvitationAtom);
  const signOut = useSetAtom(signOutAtom);
  const toast = useSetAtom(showToastAtom);
  const [preview, setPreview] = useState<Preview>({ status: 'loading' });
  const [auth, setAuth] = useState<AuthTab | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // read again after a sign-in here: the account that used the link already is told it joined
  const userId = user?.id ?? null;
  useEffect(() => {
    let current = true;
    setPreview({ status: 'loading' });
    fetchInvitation(token)
      .then((invitation) => current && setPreview({ status: 'done', invitation }))
      .catch(
        (err: unknown) =>
          current && setPreview({ status: 'error', message: apiErrorMessage(err, SOMETHING_WENT_WRONG), used: isApiHttpError(err) && err.code === INVITATION_USED }),
      );
    return () => {
      current = false;
    };
  }, [token, userId]);

  async function accept(invitation: InvitationPreview) {
    setBusy(true);
    setError(null);
    try {
      const workspaceId = await acceptInvitation(token);
      toast({ kind: 'success', message: `You joined ${invitation.workspaceName}.` });
      leave(workspaceId);
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
      setBusy(false);
    }
  }

  let body: ReactElement;
  if (preview.status === 'loading') {
    body = <LoadingState label="Loading invitation..." />;
  } else if (preview.status === 'error') {
    body = (
      <>
        <h1 id="invitation-title">Invitation</h1>
        <p className="form-error" role="alert">
          {preview.message}
        </p>
        <div className="form-actions invitation-actions">
          {!user && preview.used && (
            <button type="button" className="button button-secondary" onClick={() => setAuth('signin')}>
              Sign in
            </button>
          )}
          <button type="button" className="button button-primary" onClick={() => leave(null)}>
            {user ? 'Go to your dashboard' : 'Go to Render Studio'}
          </button>
        </div>
        {auth && !user && <AuthDialog tab={auth} onTabChange={setAuth} onClose={() => setAuth(null)} onAuthenticated={() => setAuth(null)} />}
      </>
    );
  } else if (preview.invitation.joinedWorkspaceId) {
    const { invitation } = preview;
    const workspaceId = preview.invitation.joinedWorkspaceId;
    body = (
      <>
        <h1 id="invitation-title">You already joined {invitation.workspaceName}</h1>
        <p>
          This invitation was accepted with your account ({invitation.email}), so you are a member of <strong>{invitation.workspaceName}</strong>. There is
          nothing more to do here.
        </p>
        <div className="form-actions invitation-actions">
          <button type="button" className="button button-secondary" onClick={() => leave(null)}>
            Go to your dashboard
          </button>
          <button type="button" className="button button-primary" onClick={() => leave(workspaceId)}>
            Open {invitation.workspaceName}
          </button>
        </div>
      </>
    );
  } else {
    const { invitation } = preview;
    const inviter = invitation.inviterName?.trim();
    body = (
      <>
        <h1 id="invitation-title">Join {invitation.workspaceName}</h1>
        <p>
          {inviter ? `${inviter} invited you` : 'You are invited'} to join <strong>{invitation.workspaceName}</strong> on Render Studio as{' '}
          <strong>{ROLE_LABELS[invitation.role]}</strong>.
        </p>
        <dl className="invitation-facts">
          <div>
            <dt>Workspace</dt>
            <dd>{invitation.workspaceName}</dd>
          </div>
          <div>
            <dt>Invited by</dt>
            <dd>{inviter || '—'}</dd>
          </div>
          <div>
            <dt>Role</dt>
            <dd>{ROLE_LABELS[invitation.role]}</dd>
          </div>
          <div>
            <dt>For</dt>
            <dd>{invitation.email}</dd>
          </div>
          <div>
            <dt>Valid until</dt>
            <dd>
              <time dateTime={invitation.expiresAt}>{DATE_FORMAT.format(new Date(invitation.expiresAt))}</time>
            </dd>
          </div>
        </dl>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        {user ? (
          <>
            <p className="muted">Signed in as {user.email}.</p>
            <div className="form-actions invitation-actions">
              <button type="button" className="button button-ghost" disabled={busy} onClick={() => leave(null)}>
                Not now
              </button>
              <button type="button" className="button button-secondary" disabled={busy} onClick={() => void signOut()}>
                Sign out
              </button>
              <button type="button" className="button button-primary" disabled={busy} onClick={() => void accept(invitation)}>
                {busy ? 'Joining...' : 'Accept invitation'}
              </button>
            </div>
          </>
        ) : (
          <>
            <p className="muted">Sign up with {invitation.email}, or sign in if you already have an account, then accept.</p>
            <div className="form-actions invitation-actions">
              <button type="button" className="button button-secondary" onClick={() => setAuth('signin')}>
                Sign in
              </button>
              <button type="button" className="button button-primary" onClick={() => setAuth('signup')}>
                Sign up
              </button>
            </div>
          </>
        )}
        {auth && !user && (
          <AuthDialog tab={auth} onTabChange={setAuth} onClose={() => setAuth(null)} onAuthenticated={() => setAuth(null)} email={invitation.email} />
        )}
      </>
    );
  }

  return (
    <main className="page-center invitation-page" id="main">
      <div className="panel invitation-panel" aria-labelledby={preview.status === 'loading' ? undefined : 'invitation-title'} role="region">
        <p className="brand invitation-brand">
          <span className="brand-mark" aria-hidden="true">
            R
          </span>
          <span>Render Studio</span>
        </p>
        {body}
      </div>
    </main>
  );
}
