import { useEffect, useState, type ReactElement } from 'react';
import { apiErrorMessage } from '../../api/client';
import { fetchMembers, requestCredits } from '../../api/workspaces';
import { WORKSPACE_MSG } from '../../../../domain/workspaceRoles';

/**
 * Billing for a member who cannot buy: who can (the workspace's owners and admins, by name) and a button that tells
 * them, in their open apps and by e-mail where it is set up (POST /api/workspaces/{id}/credit-requests).
 */
export function AskForCredits({ workspaceId, workspaceName }: { workspaceId: string; workspaceName: string }): ReactElement {
  const [buyers, setBuyers] = useState<string[] | null>(null);
  const [sending, setSending] = useState(false);
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | null>(null);

  useEffect(() => {
    let live = true;
    setBuyers(null);
    setAnswer(null);
    fetchMembers(workspaceId).then(
      (members) => live && setBuyers(members.filter((m) => m.role === 'owner' || m.role === 'admin').map((m) => m.name || m.email)),
      () => live && setBuyers([]),
    );
    return () => {
      live = false;
    };
  }, [workspaceId]);

  async function ask(): Promise<void> {
    setSending(true);
    try {
      setAnswer({ ok: true, text: await requestCredits(workspaceId) });
    } catch (err) {
      setAnswer({ ok: false, text: apiErrorMessage(err, 'Could not send the request. Please try again.') });
    } finally {
      setSending(false);
    }
  }

  return (
    <div className="notice-info ask-for-credits">
      <p>{buyers && buyers.length > 0 ? WORKSPACE_MSG.askBuyers(buyers, workspaceName) : `Ask an admin of ${workspaceName} to buy credits.`}</p>
      {answer?.ok ? (
        <p role="status">{answer.text}</p>
      ) : (
        <>
          <button type="button" className="button button-secondary" disabled={sending || buyers === null} onClick={() => void ask()}>
            {sending ? 'Sending…' : 'Ask them for credits'}
          </button>
          {answer && !answer.ok && <p role="alert">{answer.text}</p>}
        </>
      )}
    </div>
  );
}
