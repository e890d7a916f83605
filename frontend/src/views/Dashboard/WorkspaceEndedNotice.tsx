import type { ReactElement } from 'react';
import '../../components/PendingCostNotice.css';
import './WorkspaceEndedNotice.css';

/** A link to a workspace the user is no member of, whose name the app never knew (never a member, or not since this page opened). */
export const NOT_A_MEMBER_TEXT = 'You are not a member of that workspace (any more), so your personal workspace is shown.';

/** The workspace the user was in stopped being theirs while the app showed it: removed by an owner or admin, or deleted. */
export function noLongerMemberText(workspaceName: string): { title: string; detail: string } {
  return { title: `You are no longer a member of ${workspaceName}.`, detail: 'You were removed from it, or it was deleted. Your personal workspace is shown.' };
}

/**
 * Says why the app left a workspace for the personal one, naming it when it was the one on screen, and stays until
 * dismissed: a removal while the user works there is news they should not miss in a toast's 4 seconds.
 */
export function WorkspaceEndedNotice({ workspaceName, onDismiss }: { workspaceName: string | null; onDismiss: () => void }): ReactElement {
  const named = workspaceName ? noLongerMemberText(workspaceName) : null;
  return (
    <div className="notice notice-amber workspace-ended-notice" role="alert">
      <p>
        {named ? (
          <>
            <strong>{named.title}</strong> {named.detail}
          </>
        ) : (
          NOT_A_MEMBER_TEXT
        )}
      </p>
      <div className="notice-actions">
        <button type="button" className="button button-secondary" onClick={onDismiss}>
          Dismiss
        </button>
      </div>
    </div>
  );
}
