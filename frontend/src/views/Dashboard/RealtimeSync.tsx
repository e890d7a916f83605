import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useRef } from 'react';
import { fetchCurrentUser } from '../../api/auth';
import type { DeliveredEvent } from '../../api/events';
import { subscribeToSharedEvents } from '../../api/sharedEvents';
import { announceContentRefresh } from '../../api/projects';
import { refreshExportAtom } from '../../atoms/accountData';
import { refreshApprovalsListAtom, requestApprovalStatsRefreshAtom } from '../../atoms/approvals';
import { refreshCreditsAtom } from '../../atoms/credits';
import { refreshProjectsAtom } from '../../atoms/project';
import { realtimeConnectedAtom, realtimePausedAtom, realtimeResyncAtom, realtimeRetryAtom, recordJobEventAtom } from '../../atoms/realtime';
import { currentUserAtom, sessionEndedAtom } from '../../atoms/session';
import { currentWorkspaceAtom, refreshWorkspacesAtom, workspaceAllowsAtom, workspaceChangedAtom } from '../../atoms/workspace';
import { showToastAtom } from '../../atoms/toast';
import { WORKSPACE_MSG } from '../../../../domain/workspaceRoles';
import { webhookChangedAtom } from '../../atoms/webhooks';
import { commentsChangedAtom } from '../../atoms/comments';
import { refreshNotificationsAtom } from '../../atoms/notifications';
import { workspaceParamAtom } from '../../atoms/view';

/** Folds a burst of credit events (a reservation, then its charge) into one read. */
const CREDITS_DEBOUNCE_MS = 250;
/** While the stream is down, the badge and the balance are re-read this often. */
export const FALLBACK_POLL_MS = 60_000;

/** Calls `run` once, `ms` after the last of a burst of calls. */
const LIST_DEBOUNCE_MS = 200;

function debounced(run: () => void, ms: number): { call: () => void; cancel: () => void } {
  let timer: number | undefined;
  return {
    call: () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(run, ms);
    },
    cancel: () => window.clearTimeout(timer),
  };
}

/**
 * The app's one subscription to the user's event stream in the current workspace (DESIGN.md "Live updates",
 * "Teams"). Each event makes the part
 * it names re-read itself: approvals (the badge count debounced 1 s as spec 001 section 4 asks, the open list at once), the credit
 * balance, a project's library, a running job's progress. While the stream is down it polls the badge and the
 * balance once a minute, and re-reads everything once when the stream is back. When the stream says its session
 * ended, or a reconnect is refused and the session turns out to be gone, the app is signed out as after a sign-out.
 * Renders nothing.
 */
export function RealtimeSync(): null {
  const requestStats = useSetAtom(requestApprovalStatsRefreshAtom);
  const refreshList = useSetAtom(refreshApprovalsListAtom);
  const refreshCredits = useSetAtom(refreshCreditsAtom);
  const refreshProjects = useSetAtom(refreshProjectsAtom);
  const refreshExport = useSetAtom(refreshExportAtom);
  const setConnected = useSetAtom(realtimeConnectedAtom);
  const setPaused = useSetAtom(realtimePausedAtom);
  const setRetry = useSetAtom(realtimeRetryAtom);
  const bumpResync = useSetAtom(realtimeResyncAtom);
  const recordJobEvent = useSetAtom(recordJobEventAtom);
  const sessionEnded = useSetAtom(sessionEndedAtom);
  const refreshWorkspaces = useSetAtom(refreshWorkspacesAtom);
  const workspaceChanged = useSetAtom(workspaceChangedAtom);
  const webhookChanged = useSetAtom(webhookChangedAtom);
  const commentsChanged = useSetAtom(commentsChangedAtom);
  const refreshNotifications = useSetAtom(refreshNotificationsAtom);
  const userId = useAtomValue(currentUserAtom)?.id;
  const allows = useAtomValue(workspaceAllowsAtom);
  const workspaceName = useAtomValue(currentWorkspaceAtom)?.name;
  const toast = useSetAtom(showToastAtom);
  // a member asked for credits: the owners and admins looking at the app are told (services/workspaces/creditRequests.ts)
  const creditAsked = (who: string) => {
    if (allows('billing')) toast({ kind: 'info', message: WORKSPACE_MSG.creditsAsked(who, workspaceName ?? 'this workspace') });
  };
  // the current workspace's events only; a switch ends this stream and opens the other workspace's
  const workspaceId = useAtomValue(workspaceParamAtom);
  const actions = useRef({ requestStats, refreshList, refreshCredits, refreshProjects, refreshExport, setConnected, setPaused, bumpResync, recordJobEvent, sessionEnded, refreshWorkspaces, workspaceChanged, webhookChanged, commentsChanged, refreshNotifications, creditAsked, userId });
  actions.current = { requestStats, refreshList, refreshCredits, refreshProjects, refreshExport, setConnected, setPaused, bumpResync, recordJobEvent, sessionEnded, refreshWorkspaces, workspaceChanged, webhookChanged, commentsChanged, refreshNotifications, creditAsked, userId };

  useEffect(() => {
    const a = () => actions.current;
    // the spec's 1 s debounce is for the count (requestStats); the open list only coalesces a burst of events
    const approvalsList = debounced(() => a().refreshList({ force: true }), LIST_DEBOUNCE_MS);
    const credits = debounced(() => a().refreshCredits(), CREDITS_DEBOUNCE_MS);
    const projects = debounced(() => a().refreshProjects(), CREDITS_DEBOUNCE_MS);
    let fallback: number | undefined;

    const resyncAll = () => {
      a().requestStats();
      approvalsList.call();
      credits.call();
      projects.call();
      announceContentRefresh();
      a().refreshExport();
      a().bumpResync((n) => n + 1);
      void a().refreshNotifications();
    };

    const onEvent = (event: DeliveredEvent) => {
      switch (event.kind) {
        case 'approval':
          a().requestStats();
          approvalsList.call();
          break;
        case 'credits':
          credits.call();
          break;
        case 'content':
          announceContentRefresh(event.projectId);
          if (event.contentKind === 'project' || event.contentKind === 'render') projects.call();
          break;
        case 'job':
          a().recordJobEvent(event);
          if (event.job === 'export') a().refreshExport();
          break;
        case 'workspace':
          if (event.change === 'credit-request') a().creditAsked(event.requestedBy);
          else a().workspaceChanged();
          break;
        case 'webhook':
          a().webhookChanged({ endpointId: event.endpointId, change: event.change });
          break;
        case 'comments':
          a().commentsChanged({ itemId: event.itemId });
          break;
        case 'notification':
          if (a().userId && event.userIds.includes(a().userId as string)) void a().refreshNotifications();
          break;
      }
    };

    let checkingSession = false;
    /**
     * A refused reconnect: signed out (401) or another account signed in meanwhile ends this one; a membership that
     * ended (removed from the workspace) shows once the workspace list is read again; anything else is retried.
     */
    const checkSession = () => {
      if (checkingSession) return;
      checkingSession = true;
      fetchCurrentUser()
        .then((user) => {
          if (user?.id !== a().userId) void a().sessionEnded();
          else if (workspaceId) a().refreshWorkspaces();
        })
        .catch(() => undefined)
        .finally(() => (checkingSession = false));
    };

    // one stream per browser: the tabs of this account in this workspace share it (api/sharedEvents.ts)
    const subscription = subscribeToSharedEvents(userId ?? 'unknown', workspaceId, {
      onEvent,
      onSessionEnded: () => void a().sessionEnded(),
      // removed from the workspace (or it was deleted): the list no longer has it, and the app leaves it with a notice naming it (DashboardShell)
      onWorkspaceEnded: () => a().refreshWorkspaces(),
      onRefused: checkSession,
      onOpen: (reconnected) => {
        window.clearInterval(fallback);
        fallback = undefined;
        a().setConnected(true);
        a().setPaused(false);
        if (reconnected) resyncAll();
      },
      onDown: () => {
        a().setConnected(false);
        a().setPaused(true);
        if (fallback !== undefined) return;
        fallback = window.setInterval(() => {
          if (document.visibilityState !== 'visible') return;
          a().requestStats();
          credits.call();
        }, FALLBACK_POLL_MS);
      },
    });
    setRetry({ run: subscription.retryNow });
    return () => {
      subscription.close();
      setRetry(null);
      window.clearInterval(fallback);
      approvalsList.cancel();
      credits.cancel();
      projects.cancel();
      a().setConnected(false);
      a().setPaused(false);
    };
  }, [workspaceId, userId, setRetry]);

  return null;
}
