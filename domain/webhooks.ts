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
  'webhook.test': 'A test event sent from the endpoint page',
};

/** The kinds of job an event names. */
export type WebhookJobKind = 'image' | 'clip' | 'assembly' | 'enhance';
/** The kinds of generated item an approval is for. */
export type WebhookItemKind = 'image' | 'clip';

export interface RenderUploadedData {
  workspaceId: string;
  projectId: string;
  renderId: string;
  fileName: string;
  /** API path of the render's original (needs a credential with the read scope) */
  href: string;
}

export interface JobEventData {
  workspaceId: string;
  projectId: string | null;
  jobId: string;
  kind: WebhookJobKind;
  status: 'started' | 'completed' | 'failed';
  /** the member who started it */
  startedBy: string | null;
  /** for completed jobs: the output's item id and API path, when there is one */
  itemId?: string | null;
  href?: string | null;
  /** for failed jobs: the user-facing reason */
  error?: string | null;
}

export interface ApprovalEventData {
  workspaceId: string;
  projectId: string | null;
  approvalId: string;
  itemId: string;
  kind: WebhookItemKind;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  credits: number;
  /** who decided (approved or rejected), null for created and expired */
  decidedBy: string | null;
  href: string | null;
}

export interface CreditsLowData {
  workspaceId: string;
  balance: number;
  threshold: number;
}

export interface PurchaseCompletedData {
  workspaceId: string;
  purchaseId: string;
  credits: number;
  /** the amount paid in the currency's smallest unit */
  amount: number;
  currency: string;
  purchasedBy: string | null;
}

export interface MemberJoinedData {
  workspaceId: string;
  userId: string;
  role: string;
  invitationId: string | null;
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
