import type { ReactElement } from 'react';
import type { ApprovalListItem } from '../../api/approvals';
import { Icon } from '../../components/Icon';
import { progressText } from '../../../../domain/approvalPolicy';
import { versionLabel } from '../../../../domain/changeRequests';
import { approvalTypeBadge, deadlineBadge, isVideoItem, saveCostLabel } from './approvalBadges';

export type Decision = 'approve' | 'reject';

export interface ApprovalActionsProps {
  item: ApprovalListItem;
  /** the decision in flight for this item, if any */
  busy: Decision | null;
  /** another item's decision is in flight */
  locked: boolean;
  onDecide: (decision: Decision) => void;
  /** the id of the text saying why Reject is disabled (no credit package bought yet), or null when it is allowed */
  rejectLockedBy: string | null;
  /** a role that may not decide (a viewer): no Save or Reject */
  readOnly?: boolean;
  /** opens "Request changes" (images and clips) */
  onRequestChanges?: () => void;
}

/** Reject and Save (with its cost label), as on the card and in the large preview. */
export function ApprovalActions({ item, busy, locked, onDecide, rejectLockedBy, readOnly = false, onRequestChanges }: ApprovalActionsProps): ReactElement | null {
  if (readOnly) return null;
  const disabled = busy !== null || locked;
  const cost = saveCostLabel(item.remaining_cost);
  const { you_approved: approvedByMe, you_may_approve: mayApprove } = item.approvals;
  return (
    <div className="approval-decisions">
      <button
        type="button"
        className="button button-secondary"
        disabled={disabled || rejectLockedBy !== null}
        onClick={() => onDecide('reject')}
        aria-label={`Reject ${item.file_name}`}
        aria-describedby={rejectLockedBy ?? undefined}
      >
        {busy === 'reject' ? 'Rejecting...' : 'Reject'}
      </button>
      {onRequestChanges && item.content_type !== 'assembly' && (
        // a rejection too: locked as Reject is, for the same reason
        <button
          type="button"
          className="button button-secondary"
          disabled={disabled || rejectLockedBy !== null}
          onClick={onRequestChanges}
          aria-label={`Request changes to ${item.file_name}`}
          aria-describedby={rejectLockedBy ?? undefined}
        >
          <Icon name="pencil" size={16} /> Request changes
        </button>
      )}
      {approvedByMe ? (
        // one approval per person: theirs is in, the item waits for the others (its policy)
        <button type="button" className="button button-primary" disabled aria-label={`You approved ${item.file_name}`}>
          <Icon name="check" size={16} /> You approved
        </button>
      ) : (
        /* the accessible name starts with the visible text ('Save 4 credits'), then says which item */
        <button
          type="button"
          className="button button-primary"
          disabled={disabled || !mayApprove}
          onClick={() => onDecide('approve')}
          aria-label={busy === 'approve' ? `Saving... ${item.file_name}` : `Save ${cost}: ${item.file_name}`}
          title={mayApprove ? undefined : 'Only the approvers this item names can approve it'}
        >
          {busy === 'approve' ? (
            'Saving...'
          ) : (
            <>
              Save <span className="approval-cost">{cost}</span>
            </>
          )}
        </button>
      )}
    </div>
  );
}

/**
 * Who must approve the item and who has (its approval policy, kept from when it was made): nothing for "any member",
 * else "1 of 2 approvals" with the names.
 */
export function ApprovalProgressNote({ item }: { item: ApprovalListItem }): ReactElement | null {
  const { approvals } = item;
  if (approvals.policy.kind === 'any') return null;
  const approved = approvals.approved_by.map((p) => p.name);
  const awaiting = approvals.awaiting.map((p) => p.name);
  return (
    <div className="approval-progress">
      <p className="approval-progress-count">
        <Icon name="users" size={16} /> {progressText({ needed: approvals.needed, approvedBy: approved })}
        <span className="muted"> · {approvals.policy.kind === 'count' ? `needs ${approvals.needed} different members` : 'named approvers'}</span>
      </p>
      {approved.length > 0 && <p className="muted approval-progress-names">Approved by {approved.join(', ')}</p>}
      {awaiting.length > 0 && <p className="muted approval-progress-names">Waiting for {awaiting.join(', ')}</p>}
      {!approvals.you_may_approve && <p className="muted approval-progress-names">You are not one of its approvers: you can still reject it or comment.</p>}
    </div>
  );
}

/** The watermarked file: an image, or a muted looping video for clips and assemblies. */
export function ApprovalMedia({ item, large = false }: { item: ApprovalListItem; large?: boolean }): ReactElement {
  if (!item.watermarked_file_url) return <span className="approval-placeholder">{approvalTypeBadge(item)}</span>;
  return isVideoItem(item) ? (
    <video src={item.watermarked_file_url} muted loop playsInline controls={large} autoPlay={large} preload="metadata" aria-label={`Preview of ${item.file_name}`} />
  ) : (
    <img src={item.watermarked_file_url} alt={`Preview of ${item.file_name}`} loading="lazy" decoding="async" />
  );
}

/** One masonry card: watermarked file, type and deadline badges, Expand, Save and Reject. */
export function ApprovalCard({ now, onExpand, ...actions }: ApprovalActionsProps & { now: number; onExpand: () => void }): ReactElement {
  const { item } = actions;
  const deadline = deadlineBadge(item.approval_deadline, now);
  return (
    <li className="approval-card" data-approval-id={item.id}>
      <div className="approval-media">
        <ApprovalMedia item={item} />
        <span className="approval-badges">
          <span className={`approval-badge approval-type approval-type-${item.content_type}`}>{approvalTypeBadge(item)}</span>
          <span className={`approval-badge approval-deadline${deadline === 'Expired' ? ' approval-deadline-expired' : ''}`}>{deadline}</span>
          {item.version > 1 && (
            <span className="approval-badge approval-version" title={`Version ${item.version}, made from a request for changes`}>
              {versionLabel(item.version)}
            </span>
          )}
        </span>
        <button type="button" className="approval-expand icon-button" onClick={onExpand} aria-label={`Expand ${item.file_name}`} title="Expand">
          <Icon name="expand" size={18} />
        </button>
      </div>
      <div className="approval-body">
        <p className="approval-name">{item.file_name}</p>
        {item.prompt && (
          <p className="approval-card-prompt" title={item.prompt}>
            <span className="visually-hidden">Prompt: </span>“{item.prompt}”
          </p>
        )}
        {item.project_name && <p className="muted approval-project">{item.project_name}</p>}
        <ApprovalProgressNote item={item} />
        <ApprovalActions {...actions} />
      </div>
    </li>
  );
}
