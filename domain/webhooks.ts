/**
 * Webhook events (DESIGN.md "Integrations (tokens and webhooks)"): the event types a workspace's endpoints subscribe
 * to, and the payload each one carries. Pure data and types, shared by the server (the outbox writer in
 * services/integrations/webhookOutbox.ts, the delivery workflow, the OpenAPI document's webhooks section) and the
 * front end (the endpoint form's event checkboxes).
 *
 * Payloads follow the Standard Webhooks specification's recommended shape `{ type, timestamp, data }` and stay
 * small: ids, kind, status and links through the API, never file bytes. `version` names the payload schema; a change
 * that is not purely additive bumps it.
 */

export const WEBHOOK_PAYLOAD_VERSION = 1 as const;

export const WEBHOOK_EVENT_TYPES = [
  'render.uploaded',
  'job.started',
  'job.completed',
  'job.failed',
  'approval.created',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'credits.low',
  'purchase.completed',
  'member.joined',
  'comment.created',
  'comment.resolved',
  'review.comment_created',
  'review.decided',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent by "Send test event" only, whatever the endpoint subscribes to. */
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test' as const;
export type AnyWebhookEventType = WebhookEventType | typeof WEBHOOK_TEST_EVENT_TYPE;

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** What each type is for, as the endpoint form and the docs show it. */
export const WEBHOOK_EVENT_DESCRIPTIONS: Record<AnyWebhookEventType, string> = {
  'render.uploaded': 'A render was uploaded to a project',
  'job.started': 'An image edit, clip, video assembly or Enhance Renders job started',
  'job.completed': 'A job finished and its output is ready (pending approval where it costs credits)',
  'job.failed': 'A job failed; its reserved credits were released',
  'approval.created': 'A generated item is waiting for approval',
  'approval.approved': 'A pending item was approved and charged',
  'approval.rejected': 'A pending item was rejected',
  'approval.expired': 'A pending item expired without a decision',
  'credits.low': "The workspace's balance fell below the low-credit threshold",
  'purchase.completed': 'A credit purchase was paid and credited',
  'member.joined': 'Someone accepted an invitation and joined the workspace',
  'comment.created': 'Someone commented on an item or a render, or replied to a comment',
  'comment.resolved': 'A comment thread on an item or a render was resolved',
  'review.comment_created': 'A guest of a review link commented on an item of the link, or replied',
  'review.decided': 'A guest of a review link approved an item or requested changes (or the studio was asked, where its rules refused)',
  'webhook.test': 'A test event sent from the endpoint page',
};

/** The kinds of job an event names: AI image edit, clip, video assembly, Enhance Renders (draft) model run. */
export type WebhookJobKind = 'image' | 'clip' | 'assembly' | 'enhance';
export const WEBHOOK_JOB_KINDS = ['image', 'clip', 'assembly', 'enhance'] as const satisfies readonly WebhookJobKind[];
/** The kinds of generated item an approval is for (an assembly is a compiled social video; it costs 0 credits). */
export type WebhookItemKind = 'image' | 'clip' | 'assembly';
export const WEBHOOK_ITEM_KINDS = ['image', 'clip', 'assembly'] as const satisfies readonly WebhookItemKind[];

/**
 * Links in payloads are API paths (relative to the API's public URL) a credential with the read scope can follow.
 * Paths that name no project carry `workspaceId`, so they answer in the event's workspace.
 */
export interface RenderUploadedData {
  workspaceId: string;
  projectId: string;
  renderId: string;
  fileName: string;
  /** bytes of the stored original */
  fileSize: number;
  width: number | null;
  height: number | null;
  /** the render and its lineage: GET /api/content/{renderId}/lineage */
  href: string;
}

/** How a job ended or stands: `cancelled` comes with job.failed (a member cancelled it; its credits were released). */
export type WebhookJobStatus = 'started' | 'completed' | 'failed' | 'cancelled';

export interface JobEventData {
  workspaceId: string;
  /** the project (null for Enhance Renders, whose place is a draft) */
  projectId: string | null;
  jobId: string;
  kind: WebhookJobKind;
  status: WebhookJobStatus;
  /** the member who started it (null when unknown or since deleted) */
  startedBy: string | null;
  /** completed image, clip and assembly jobs: the pending item waiting for approval (see approval.created) */
  approvalId: string | null;
  /** Enhance Renders jobs: the draft and its image the job works on */
  draftId: string | null;
  draftImageId: string | null;
  /** failed jobs: the user-facing reason */
  error: string | null;
  /** the job's status call */
  href: string;
}

export interface ApprovalEventData {
  workspaceId: string;
  projectId: string;
  approvalId: string;
  kind: WebhookItemKind;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  fileName: string;
  /** the full cost in credits; charged on approval, released on rejection or expiry */
  credits: number;
  /** when a pending item expires unless decided (ISO 8601) */
  deadline: string;
  /** the member whose generation made the item */
  createdBy: string | null;
  /** who decided (approved or rejected); null for created and expired */
  decidedBy: string | null;
  /** approved items: the saved content item (its original can now be downloaded) */
  contentId: string | null;
  /** pending: the approval queue; approved: the saved item's lineage; rejected and expired: the queue */
  href: string;
}

export interface CreditsLowData {
  workspaceId: string;
  /** the balance after the change that crossed below the threshold */
  balance: number;
  /** the balance before that change */
  previousBalance: number;
  /** credits still held by pending items (available = balance - reserved) */
  reserved: number;
  threshold: number;
  /** the credit summary: GET /api/credits/summary */
  href: string;
}

export interface PurchaseCompletedData {
  workspaceId: string;
  purchaseId: string;
  packageId: string;
  credits: number;
  /** the amount paid in the currency's smallest unit */
  amount: number;
  currency: string;
  /** the member who bought it (null when unknown) */
  purchasedBy: string | null;
  /** the purchase: GET /api/stripe/purchases/{sessionId} */
  href: string;
}

export interface MemberJoinedData {
  workspaceId: string;
  userId: string;
  role: string;
  invitationId: string | null;
  /** the workspace's members: GET /api/workspaces/{id}/members */
  href: string;
}

/** What a comment event is about: the item, the thread, and (comment.created) the new comment. */
export interface CommentEventData {
  workspaceId: string;
  /** render, image, clip, compiled_video, generated; approval for an item still waiting for approval */
  itemKind: string;
  itemId: string;
  threadId: string;
  /** comment.created: the new comment (the thread's opening one, or a reply); comment.resolved: null */
  commentId: string | null;
  /** comment.created: whether it opened the thread (false: a reply) */
  opensThread: boolean;
  /** who wrote it (comment.created) or resolved the thread (comment.resolved); null once the account is deleted */
  by: string | null;
  /** the comment's text, at most the first 280 characters (comment.created; null for comment.resolved) */
  excerpt: string | null;
  /** the thread's pin in fractions of the picture and/or seconds, or null */
  pin: { x?: number; y?: number; w?: number; h?: number; t?: number } | null;
  /** the members the comment mentions */
  mentions: string[];
  /** the item's threads: GET /api/content/{itemId}/comments */
  href: string;
}

/** A guest's comment through a review link (review.comment_created). */
export interface ReviewCommentEventData {
  workspaceId: string;
  /** the review link the guest came through */
  reviewLinkId: string;
  /** the pending item on the link (its approval id) */
  approvalId: string;
  itemKind: string;
  itemId: string;
  threadId: string;
  commentId: string;
  opensThread: boolean;
  /** who the guest said they are */
  guest: { name: string; email: string };
  excerpt: string;
  pin: { x?: number; y?: number; w?: number; h?: number; t?: number } | null;
  /** the item's threads: GET /api/content/{itemId}/comments */
  href: string;
}

/** A guest's decision through a review link (review.decided). */
export interface ReviewDecidedEventData {
  workspaceId: string;
  reviewLinkId: string;
  approvalId: string;
  decision: 'approve' | 'request_changes';
  /**
   * approved: the item was approved and charged; approval_counted: one approval of several the policy needs;
   * changes_requested: rejected and its next version started; studio_asked: the workspace's rules refused (a
   * rejection needs a past purchase, the streak cooldown ...), nothing changed and the members were asked
   */
  outcome: 'approved' | 'approval_counted' | 'changes_requested' | 'studio_asked';
  guest: { name: string; email: string };
  /** the request's text (request_changes), else null */
  request: string | null;
  /** the review link's items: GET /api/review-links/{reviewLinkId} */
  href: string;
}

export interface WebhookTestData {
  workspaceId: string;
  endpointId: string;
  message: string;
}

export interface WebhookEventDataByType {
  'render.uploaded': RenderUploadedData;
  'job.started': JobEventData;
  'job.completed': JobEventData;
  'job.failed': JobEventData;
  'approval.created': ApprovalEventData;
  'approval.approved': ApprovalEventData;
  'approval.rejected': ApprovalEventData;
  'approval.expired': ApprovalEventData;
  'credits.low': CreditsLowData;
  'purchase.completed': PurchaseCompletedData;
  'member.joined': MemberJoinedData;
  'comment.created': CommentEventData;
  'comment.resolved': CommentEventData;
  'review.comment_created': ReviewCommentEventData;
  'review.decided': ReviewDecidedEventData;
  'webhook.test': WebhookTestData;
}

/** The JSON body of a delivery. The `webhook-id` header is the event's id, the same on every attempt. */
export interface WebhookPayload<T extends AnyWebhookEventType = AnyWebhookEventType> {
  type: T;
  version: typeof WEBHOOK_PAYLOAD_VERSION;
  /** when the change happened (ISO 8601) */
  timestamp: string;
  data: WebhookEventDataByType[T];
}
