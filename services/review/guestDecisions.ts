/**
 * Guests' decisions through review links (issue 43 item 3): recorded beside the members' approvals so an item's
 * policy counts a link as one approver ("link:<id>", domain/workflowContracts/approval.ts approverKey), each with what
 * it came to, and announced to the workspace's webhooks (review.decided) in the transaction of the decision.
 */
import type { Knex } from 'knex';
import { guestLabel, type GuestDecisionOutcome } from '../../domain/reviewLinks';
import type { GuestDecider } from '../../domain/workflowContracts/approval';
import { recordReviewDecidedEvent } from '../integrations/webhookEvents';

type Db = Knex | Knex.Transaction;

/** The approver keys of the review links whose guests approved the item (counted approvals only). */
export async function guestApproverKeys(db: Db, approvalId: string): Promise<string[]> {
  const rows = (await db('review_link_decisions')
    .where({ approval_id: approvalId, decision: 'approve' })
    .whereIn('outcome', ['approved', 'approval_counted'])
    .orderBy([{ column: 'created_at' }, { column: 'review_link_id' }])
    .select('review_link_id')) as Array<{ review_link_id: string }>;
  return rows.map((r) => `link:${r.review_link_id}`);
}

/** Guests' counted approvals of these items, oldest first, with how each reads ("Guest: Ann (ann@…) via link Terrace"). */
export async function guestApprovalsOf(db: Db, approvalIds: readonly string[]): Promise<Array<{ approvalId: string; key: string; label: string; at: Date }>> {
  if (approvalIds.length === 0) return [];
  const rows = (await db('review_link_decisions as d')
    .join('review_links as l', 'l.id', 'd.review_link_id')
    .whereIn('d.approval_id', approvalIds)
    .where('d.decision', 'approve')
    .whereIn('d.outcome', ['approved', 'approval_counted'])
    .orderBy([{ column: 'd.created_at' }, { column: 'd.review_link_id' }])
    .select('d.approval_id', 'd.review_link_id', 'd.guest_name', 'd.guest_email', 'd.created_at', 'l.title')) as Array<{
    approval_id: string;
    review_link_id: string;
    guest_name: string;
    guest_email: string;
    created_at: Date;
    title: string;
  }>;
  return rows.map((r) => ({ approvalId: r.approval_id, key: `link:${r.review_link_id}`, label: guestLabel({ name: r.guest_name, email: r.guest_email }, r.title), at: r.created_at }));
}

/** Whether the link's guests have already given the item its counted approval. */
export async function linkApproved(db: Db, reviewLinkId: string, approvalId: string): Promise<boolean> {
  const row = await db('review_link_decisions')
    .where({ review_link_id: reviewLinkId, approval_id: approvalId, decision: 'approve' })
    .whereIn('outcome', ['approved', 'approval_counted'])
    .first('id');
  return Boolean(row);
}

/** The link's title and the member who made it (the actor guests' decisions are recorded for). */
export async function reviewLinkOwner(db: Db, reviewLinkId: string): Promise<{ title: string; createdBy: string | null } | null> {
  const row = (await db('review_links').where({ id: reviewLinkId }).first('title', 'created_by')) as { title: string; created_by: string | null } | undefined;
  return row ? { title: row.title, createdBy: row.created_by } : null;
}

/** How a guest's decision reads for the members. */
export async function guestDeciderLabel(db: Db, guest: GuestDecider): Promise<string> {
  const link = await reviewLinkOwner(db, guest.reviewLinkId);
  return guestLabel(guest, link?.title ?? 'a review link');
}

export interface GuestDecisionRecord {
  workspaceId: string;
  approvalId: string;
  guest: GuestDecider;
  decision: 'approve' | 'request_changes';
  outcome: GuestDecisionOutcome;
  request?: string | null;
  refusal?: string | null;
}

/**
 * Records the decision and its review.decided event. A counted approval is recorded once per link and item: a
 * retry (or a second guest of the same link) records nothing more. Answers whether it was recorded.
 */
export async function recordGuestDecision(trx: Db, d: GuestDecisionRecord): Promise<boolean> {
  const inserted = (await trx('review_link_decisions')
    .insert({
      review_link_id: d.guest.reviewLinkId,
      approval_id: d.approvalId,
      decision: d.decision,
      outcome: d.outcome,
      guest_name: d.guest.name,
      guest_email: d.guest.email,
      request: d.request ?? null,
      refusal: d.refusal ?? null,
    })
    .onConflict()
    .ignore()
    .returning('id')) as Array<{ id: string }>;
  if (inserted.length === 0) return false;
  await recordReviewDecidedEvent(trx, {
    workspaceId: d.workspaceId,
    reviewLinkId: d.guest.reviewLinkId,
    approvalId: d.approvalId,
    decision: d.decision,
    outcome: d.outcome,
    guest: { name: d.guest.name, email: d.guest.email },
    request: d.request ?? null,
  });
  return true;
}
