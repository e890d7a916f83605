import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { MSG } from '../../../../domain/messages';
import { approveItem, rejectItem, type ApprovalListItem, type ChangeRequestResponse } from '../../api/approvals';
import { versionLabel } from '../../../../domain/changeRequests';
import { RequestChangesDialog } from './RequestChangesDialog';
import { apiErrorMessage, isApiHttpError } from '../../api/client';
import { announceContentRefresh, fetchProjectContent } from '../../api/projects';
import { approvalStatsStateAtom, approvalsListStateAtom, refreshApprovalStatsAtom, refreshApprovalsListAtom } from '../../atoms/approvals';
import { purchasingStateAtom } from '../../atoms/billing';
import { creditSummaryStateAtom, refreshCreditsAtom } from '../../atoms/credits';
import { showToastAtom } from '../../atoms/toast';
import { navigateAtom } from '../../atoms/view';
import { workspaceAllowsAtom } from '../../atoms/workspace';
import { RoleNote } from '../../components/RoleNote';
import { Dialog } from '../../components/Dialog';
import { ItemReview } from '../Comments/ItemReview';
import { CompareDialog } from '../Compare/CompareDialog';
import { Icon } from '../../components/Icon';
import { LoadingState } from '../../components/Spinner';
import { rejectionLockText } from '../../components/purchasingText';
import { progressText } from '../../../../domain/approvalPolicy';
import { ApprovalActions, ApprovalCard, ApprovalMedia, ApprovalProgressNote, type Decision } from './ApprovalCard';
import { approvalTypeBadge, deadlineBadge, isVideoItem } from './approvalBadges';
import './approvals.css';
import { CreateReviewLinkDialog } from '../ReviewLinks/CreateReviewLinkDialog';

/** Deadline badges are re-read this often, and the list asked to refresh (it re-reads at most once a minute). */
const TICK_MS = 60_000;

const REJECT_LOCK_ID = 'approvals-reject-locked';

/**
 * Content Approvals (001 section 2): the pending counter, a masonry grid of watermarked previews with type and
 * deadline badges, a large preview, and Save / Reject. Saving charges the remaining cost and puts the original
 * into its project; rejecting gives the credits back (and needs a past purchase). Where nothing can be bought
 * yet, the rejection lock says how it will unlock and what to do meanwhile, and offers no Buy button.
 */
export function ApprovalsView(): ReactElement {
  const listState = useAtomValue(approvalsListStateAtom);
  const stats = useAtomValue(approvalStatsStateAtom);
  const refreshList = useSetAtom(refreshApprovalsListAtom);
  const refreshStats = useSetAtom(refreshApprovalStatsAtom);
  const refreshCredits = useSetAtom(refreshCreditsAtom);
  const credits = useAtomValue(creditSummaryStateAtom);
  const purchasingState = useAtomValue(purchasingStateAtom);
  const purchasing = purchasingState?.ok ? purchasingState.data : undefined;
  // what 'Rejections are disabled until you purchase a credit package...' (001 section 8) goes on to say here
  const rejectLockText = rejectionLockText(purchasing);
  const navigate = useSetAtom(navigateAtom);
  const toast = useSetAtom(showToastAtom);
  const [now, setNow] = useState(() => Date.now());
  const [busy, setBusy] = useState<{ id: string; decision: Decision } | null>(null);
  const [decided, setDecided] = useState<ReadonlySet<string>>(new Set());
  const [expandedId, setExpandedId] = useState<string | null>(null);
  const [comparing, setComparing] = useState<string | null>(null);
  const [requesting, setRequesting] = useState<ApprovalListItem | null>(null);
  const [sharing, setSharing] = useState(false);
  // a viewer sees the queue but saves and rejects nothing; buying is for the workspace's admins
  const allows = useAtomValue(workspaceAllowsAtom);
  const canDecide = allows('approve');
  const canBuy = allows('billing');

  // opening the view always re-reads the queue: an item made a moment ago (a clip that just finished) is on it
  useEffect(() => {
    refreshList({ force: true });
    const timer = setInterval(() => {
      setNow(Date.now());
      refreshList({ force: false });
    }, TICK_MS);
    return () => clearInterval(timer);
  }, [refreshList]);

  const [waitingForMe, setWaitingForMe] = useState(false);
  const queued: ApprovalListItem[] = listState?.ok ? listState.data.filter((item) => !decided.has(item.id)) : [];
  // "Waiting for me": what the caller can still approve (not approved yet, and the item's policy lets them)
  const mine = queued.filter((item) => item.approvals.you_may_approve && !item.approvals.you_approved);
  const items = waitingForMe && canDecide ? mine : queued;
  const expanded = items.find((item) => item.id === expandedId) ?? null;
  // rejecting needs a past purchase (001 section 4); the server refuses it too (REJECTION_REQUIRES_PURCHASE)
  const rejectLocked = credits?.ok === true && credits.data !== null && credits.data.totalCreditsPurchased <= 0;
  const rejectLockedBy = rejectLocked ? REJECT_LOCK_ID : null;
  const pendingCount = listState?.ok ? queued.length : stats?.ok && stats.data ? stats.data.pending_count : 0;

  function settled(item: ApprovalListItem): void {
    setDecided((current) => new Set(current).add(item.id));
    if (expandedId === item.id) setExpandedId(null);
  }

  async function decide(item: ApprovalListItem, decision: Decision): Promise<void> {
    setBusy({ id: item.id, decision });
    try {
      const answer = decision === 'approve' ? await approveItem(item.id) : await rejectItem(item.id);
      if (decision === 'approve' && answer.contentId === null && answer.approvals) {
        // the item's policy waits for more approvals: it stays in the queue, showing yours
        toast({ kind: 'info', message: `Your approval is recorded: ${progressText({ needed: answer.approvals.needed, approvedBy: answer.approvals.approved_by.map((p) => p.user_id) })}.` });
        return;
      }
      settled(item);
      if (decision === 'approve') {
        toast({ kind: 'success', message: 'Saved successfully!' });
        // the library re-reads past both caches (?refresh=1&bust=), then any open library refreshes
        await fetchProjectContent(item.project_id, { fresh: true }).catch(() => undefined);
        announceContentRefresh(item.project_id);
      } else if (!answer.warning) {
        toast({ kind: 'info', message: 'Item rejected. Its credits are available again.' });
      }
      if (answer.warning) toast({ kind: answer.code === 'REJECTION_STREAK_COOLDOWN' ? 'error' : 'info', message: answer.warning });
    } catch (error) {
      if (isApiHttpError(error) && error.code === 'REJECTION_REQUIRES_PURCHASE') {
        toast({ kind: 'error', message: rejectLockText });
        if (purchasing !== 'unavailable') navigate({ view: 'account', accountTab: 'billing' });
        return;
      }
      if (isApiHttpError(error) && (error.status === 404 || error.status === 409)) settled(item);
      const reason = apiErrorMessage(error, MSG.somethingWentWrong);
      toast({ kind: 'error', message: decision === 'approve' ? `Failed to approve: ${reason}` : `Failed to reject: ${reason}` });
    } finally {
      setBusy(null);
      refreshList({ force: true });
      refreshStats({ fresh: true });
      refreshCredits();
    }
  }

  /** The item is rejected with its request; its next version is being made (or could not start: the answer says why). */
  function changesRequested(item: ApprovalListItem, answer: ChangeRequestResponse): void {
    setRequesting(null);
    settled(item);
    if (answer.next) {
      toast({ kind: 'success', message: `Changes requested. ${versionLabel(answer.next.version)} is being made: it will be here for approval when it is ready.` });
    } else if (answer.next_error) {
      toast({ kind: 'error', message: `The item was rejected, but the new version could not start: ${answer.next_error.error}` });
    }
    if (answer.warning) toast({ kind: answer.code === 'REJECTION_STREAK_COOLDOWN' ? 'error' : 'info', message: answer.warning });
    refreshList({ force: true });
    refreshStats({ fresh: true });
    refreshCredits();
  }

  async function copyPrompt(prompt: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(prompt);
      toast({ kind: 'success', message: 'Copied to clipboard!' });
    } catch {
      toast({ kind: 'error', message: MSG.somethingWentWrong });
    }
  }

  let body: ReactElement;
  if (listState === undefined) {
    body = <LoadingState label="Loading approvals..." />;
  } else if (!listState.ok) {
    body = (
      <div className="panel error-panel" role="alert">
        <p>Failed to load approvals</p>
        <button type="button" className="button button-primary" onClick={() => refreshList({ force: true })}>
          Retry
        </button>
      </div>
    );
  } else if (items.length === 0 && queued.length > 0) {
    body = (
      <div className="empty-state">
        <span className="empty-icon">
          <Icon name="check" size={28} />
        </span>
        <h2>Nothing is waiting for you</h2>
        <p>You have approved everything you can here; the rest waits for others.</p>
        <button type="button" className="button button-secondary" onClick={() => setWaitingForMe(false)}>
          Show all pending
        </button>
      </div>
    );
  } else if (items.length === 0) {
    body = (
      <div className="empty-state">
        <span className="empty-icon">
          <Icon name="check" size={28} />
        </span>
        <h2>No pending approvals</h2>
        <p>All your generated content has been reviewed.</p>
      </div>
    );
  } else {
    body = (
      <ul className="approval-grid" aria-label="Pending approvals">
        {items.map((item) => (
          <ApprovalCard
            key={item.id}
            item={item}
            now={now}
            busy={busy?.id === item.id ? busy.decision : null}
            locked={busy !== null && busy.id !== item.id}
            onDecide={(decision) => void decide(item, decision)}
            rejectLockedBy={rejectLockedBy}
            readOnly={!canDecide}
            onRequestChanges={() => setRequesting(item)}
            onExpand={() => setExpandedId(item.id)}
          />
        ))}
      </ul>
    );
  }

  return (
    <section className="view" aria-labelledby="approvals-title">
      <header className="view-header">
        <h1 id="approvals-title">Content Approvals</h1>
        <p className="counter" aria-live="polite">
          <strong>{pendingCount}</strong> pending
        </p>
        {canDecide && queued.length > 0 && (
          <button type="button" className="button button-ghost button-small approval-filter" aria-pressed={waitingForMe} onClick={() => setWaitingForMe((on) => !on)}>
            Waiting for me ({mine.length})
          </button>
        )}
        {canDecide && queued.length > 0 && (
          <button type="button" className="button button-secondary button-small" onClick={() => setSharing(true)}>
            <Icon name="send" size={16} /> Share for review
          </button>
        )}
      </header>
      {sharing && <CreateReviewLinkDialog preselected={items.map((i) => i.id)} onClose={() => setSharing(false)} />}
      {!canDecide && <RoleNote what="save or reject items" />}
      {canDecide && rejectLocked && items.length > 0 && (
        <div className="notice-info approval-reject-locked" role="note">
          <p id={REJECT_LOCK_ID}>{rejectLockText}</p>
          {purchasing !== 'unavailable' && canBuy && (
            <div className="notice-actions">
              <button type="button" className="button button-secondary" onClick={() => navigate({ view: 'account', accountTab: 'billing' })}>
                Buy credits
              </button>
            </div>
          )}
        </div>
      )}
      {body}
      {expanded && (
        <Dialog title={expanded.file_name} onClose={() => setExpandedId(null)} className="dialog-wide dialog-review approval-dialog">
          {/* the watermarked preview with the item's comment threads (pay on approval: never the original) */}
          <ItemReview
            itemId={expanded.id}
            media={{ type: isVideoItem(expanded) ? 'video' : 'image', src: expanded.watermarked_file_url, alt: `Preview of ${expanded.file_name}` }}
            fallback={
              <div className="approval-large">
                <ApprovalMedia item={expanded} large />
              </div>
            }
          />
          <p className="muted">
            {[approvalTypeBadge(expanded), expanded.version > 1 ? `Version ${expanded.version}` : null, deadlineBadge(expanded.approval_deadline, now), expanded.project_name].filter(Boolean).join(' · ')}
          </p>
          {expanded.prompt && (
            <div className="approval-prompt-row">
              <p className="approval-prompt">“{expanded.prompt}”</p>
              <button type="button" className="button button-ghost button-small" onClick={() => void copyPrompt(expanded.prompt ?? '')}>
                <Icon name="copy" size={16} /> Copy prompt
              </button>
            </div>
          )}
          <ApprovalProgressNote item={expanded} />
          <button type="button" className="button button-ghost button-small approval-compare" onClick={() => setComparing(expanded.id)}>
            <Icon name="layers" size={16} /> {expanded.version > 1 ? 'Compare with earlier versions' : 'Compare with source'}
          </button>
          <ApprovalActions
            item={expanded}
            busy={busy?.id === expanded.id ? busy.decision : null}
            locked={busy !== null && busy.id !== expanded.id}
            onDecide={(decision) => void decide(expanded, decision)}
            rejectLockedBy={rejectLockedBy}
            readOnly={!canDecide}
            onRequestChanges={() => setRequesting(expanded)}
          />
          {canDecide && rejectLocked && <p className="muted approval-reject-note">{rejectLockText}</p>}
          {comparing === expanded.id && <CompareDialog itemId={expanded.id} title={expanded.file_name} onClose={() => setComparing(null)} />}
        </Dialog>
      )}
      {requesting && (
        <RequestChangesDialog
          item={requesting}
          onClose={() => setRequesting(null)}
          onRequested={(answer) => changesRequested(requesting, answer)}
          onBuyCredits={purchasing !== 'unavailable' && canBuy ? () => navigate({ view: 'account', accountTab: 'billing' }) : undefined}
        />
      )}
    </section>
  );
}
