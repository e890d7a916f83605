/**
 * The webhook events of the product's changes (issue 29, item 2), each written through the outbox
 * (webhookOutbox.ts) inside the transaction of the change it reports: the services and activities that make a
 * change call one of these next to their realtime publishEvent, so an event exists exactly when its change does,
 * and a retried activity that changes nothing (a replayed idempotency key, a row already moved) records nothing.
 *
 * The payloads' shapes are domain/webhooks.ts's; this module fills them in the same way everywhere (the links, the
 * job kinds, the status each type carries), so a receiver sees one shape per type whichever code path made it.
 */
import type { Knex } from 'knex';
import { LOW_CREDIT_THRESHOLD } from '../../domain/billing';
import type { CommentEventData, JobEventData, ReviewCommentEventData, ReviewDecidedEventData, WebhookItemKind, WebhookJobKind, WebhookJobStatus } from '../../domain/webhooks';
import { recordWebhookEvent } from './webhookOutbox';

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A user id as payloads name people: null unless it is one (a team workspace's account id names nobody). */
function personOrNull(id: string | null | undefined): string | null {
  return id && UUID.test(id) ? id : null;
}

function inWorkspace(path: string, workspaceId: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}workspaceId=${encodeURIComponent(workspaceId)}`;
}

/** API paths the payloads link to (relative to the API's public URL). */
export const webhookLinks = {
  content: (workspaceId: string, itemId: string) => inWorkspace(`/api/content/${itemId}/lineage`, workspaceId),
  approvals: (workspaceId: string) => inWorkspace('/api/approvals/list', workspaceId),
  credits: (workspaceId: string) => inWorkspace('/api/credits/summary', workspaceId),
  purchase: (workspaceId: string, sessionId: string) => inWorkspace(`/api/stripe/purchases/${encodeURIComponent(sessionId)}`, workspaceId),
  members: (workspaceId: string) => `/api/workspaces/${workspaceId}/members`,
  comments: (workspaceId: string, itemId: string) => inWorkspace(`/api/content/${itemId}/comments`, workspaceId),
  reviewLink: (workspaceId: string, linkId: string) => inWorkspace(`/api/review-links/${linkId}`, workspaceId),
  job(workspaceId: string, kind: WebhookJobKind, jobId: string, draftId: string | null): string {
    switch (kind) {
      case 'image':
        return inWorkspace(`/api/ai-image-simple/status/${jobId}`, workspaceId);
      case 'clip':
        return inWorkspace(`/api/video-generation/status/${jobId}`, workspaceId);
      case 'assembly':
        return inWorkspace(`/api/video/assemble?jobId=${jobId}`, workspaceId);
      case 'enhance':
        return inWorkspace(`/api/enhance-set/drafts/get?draftId=${draftId ?? ''}`, workspaceId);
    }
  },
};

export interface JobEventInput {
  workspaceId: string;
  projectId: string | null;
  jobId: string;
  kind: WebhookJobKind;
  status: WebhookJobStatus;
  startedBy?: string | null;
  approvalId?: string | null;
  draftId?: string | null;
  draftImageId?: string | null;
  error?: string | null;
}

const JOB_EVENT_TYPE = { started: 'job.started', completed: 'job.completed', failed: 'job.failed', cancelled: 'job.failed' } as const;

/** job.started, job.completed or job.failed (also for a cancelled job: status 'cancelled'), by the job's new status. */
export async function recordJobEvent(trx: Db, input: JobEventInput): Promise<void> {
  const draftId = input.draftId ?? null;
  const data: JobEventData = {
    workspaceId: input.workspaceId,
    projectId: input.projectId,
    jobId: input.jobId,
    kind: input.kind,
    status: input.status,
    startedBy: personOrNull(input.startedBy),
    approvalId: input.approvalId ?? null,
    draftId,
    draftImageId: input.draftImageId ?? null,
    error: input.status === 'failed' || input.status === 'cancelled' ? (input.error ?? null) : null,
    href: webhookLinks.job(input.workspaceId, input.kind, input.jobId, draftId),
  };
  await recordWebhookEvent(trx, { workspaceId: input.workspaceId, type: JOB_EVENT_TYPE[input.status], resourceId: input.jobId, data });
}

/** What an approval event needs of a pending_approvals row (the objection model's field names). */
export interface ApprovalEventRow {
  id: string;
  workspaceId: string;
  projectId: string;
  contentType: string;
  fileName: string;
  cost: number;
  approvalDeadline: Date | string;
  createdBy?: string | null;
}

const APPROVAL_EVENT_TYPE = { pending: 'approval.created', approved: 'approval.approved', rejected: 'approval.rejected', expired: 'approval.expired' } as const;

/** approval.created / approved / rejected / expired, by the item's new status; the resource is the approval. */
export async function recordApprovalEvent(
  trx: Db,
  row: ApprovalEventRow,
  status: keyof typeof APPROVAL_EVENT_TYPE,
  options: { decidedBy?: string | null; contentId?: string | null } = {},
): Promise<void> {
  const contentId = status === 'approved' ? (options.contentId ?? null) : null;
  await recordWebhookEvent(trx, {
    workspaceId: row.workspaceId,
    type: APPROVAL_EVENT_TYPE[status],
    resourceId: row.id,
    data: {
      workspaceId: row.workspaceId,
      projectId: row.projectId,
      approvalId: row.id,
      kind: row.contentType as WebhookItemKind,
      status,
      fileName: row.fileName,
      credits: Number(row.cost),
      deadline: new Date(row.approvalDeadline).toISOString(),
      createdBy: personOrNull(row.createdBy),
      decidedBy: status === 'approved' || status === 'rejected' ? personOrNull(options.decidedBy) : null,
      contentId,
      href: contentId ? webhookLinks.content(row.workspaceId, contentId) : webhookLinks.approvals(row.workspaceId),
    },
  });
}

/**
 * credits.low when a balance change takes the workspace's balance from the threshold or above to below it (the
 * billing page's low-credit hint, LOW_CREDIT_THRESHOLD): once per crossing, not on every charge below it. Called by
 * the ledger under the profile lock, with the balances before and after the change.
 */
export async function recordCreditsLowIfCrossed(trx: Db, change: { workspaceId: string; before: number; after: number; reserved: number }): Promise<void> {
  if (!(change.before >= LOW_CREDIT_THRESHOLD && change.after < LOW_CREDIT_THRESHOLD)) return;
  await recordWebhookEvent(trx, {
    workspaceId: change.workspaceId,
    type: 'credits.low',
    resourceId: change.workspaceId,
    data: {
      workspaceId: change.workspaceId,
      balance: change.after,
      previousBalance: change.before,
      reserved: change.reserved,
      threshold: LOW_CREDIT_THRESHOLD,
      href: webhookLinks.credits(change.workspaceId),
    },
  });
}

/** The comment or thread a comment event is about. */
export interface CommentEventInput {
  workspaceId: string;
  itemKind: string;
  itemId: string;
  threadId: string;
  pin: CommentEventData['pin'];
  by: string | null;
  /** comment.created: the new comment */
  comment?: { id: string; body: string; opensThread: boolean; mentions: string[] };
}

/** The text's start, at most 280 UTF-16 units, never cutting a character in two. */
function excerptOf(body: string): string {
  let out = '';
  for (const ch of body) {
    if (out.length + ch.length > 280) break;
    out += ch;
  }
  return out;
}

/** comment.created (a comment given) or comment.resolved (none); the resource is the thread, so its events stay in order. */
export async function recordCommentEvent(trx: Db, input: CommentEventInput): Promise<void> {
  const c = input.comment;
  await recordWebhookEvent(trx, {
    workspaceId: input.workspaceId,
    type: c ? 'comment.created' : 'comment.resolved',
    resourceId: input.threadId,
    data: {
      workspaceId: input.workspaceId,
      itemKind: input.itemKind,
      itemId: input.itemId,
      threadId: input.threadId,
      commentId: c?.id ?? null,
      opensThread: c?.opensThread ?? false,
      by: personOrNull(input.by),
      excerpt: c ? excerptOf(c.body) : null,
      pin: input.pin,
      mentions: c?.mentions ?? [],
      href: webhookLinks.comments(input.workspaceId, input.itemId),
    },
  });
}

/** review.comment_created: a guest of a review link commented; the resource is the thread, as for comment.created. */
export async function recordReviewCommentEvent(trx: Db, input: Omit<ReviewCommentEventData, 'href' | 'excerpt'> & { body: string }): Promise<void> {
  const { body, ...rest } = input;
  await recordWebhookEvent(trx, {
    workspaceId: input.workspaceId,
    type: 'review.comment_created',
    resourceId: input.threadId,
    data: { ...rest, excerpt: excerptOf(body), href: webhookLinks.comments(input.workspaceId, input.itemId) },
  });
}

/** review.decided: a guest's decision and what it came to; the resource is the pending item, as for its approval events. */
export async function recordReviewDecidedEvent(trx: Db, input: Omit<ReviewDecidedEventData, 'href'>): Promise<void> {
  await recordWebhookEvent(trx, {
    workspaceId: input.workspaceId,
    type: 'review.decided',
    resourceId: input.approvalId,
    data: { ...input, href: webhookLinks.reviewLink(input.workspaceId, input.reviewLinkId) },
  });
}
