/**
 * The webhook events in the OpenAPI document (OpenAPI 3.1 `webhooks`, issue 29 item 2): one zod schema per event
 * type for the JSON body a delivery carries, `{ type, version, timestamp, data }` (domain/webhooks.ts), and the
 * Standard Webhooks headers that sign it. tests/webhooks/events.test.ts parses every payload the services record
 * against these schemas, so the document cannot drift from what is sent.
 *
 * The objects are open (not strict): new fields are added without a version change, as Stripe and GitHub do, and
 * receivers should ignore fields they do not know. A change that is not purely additive bumps `version`.
 */
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  WEBHOOK_EVENT_DESCRIPTIONS,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_ITEM_KINDS,
  WEBHOOK_JOB_KINDS,
  WEBHOOK_PAYLOAD_VERSION,
  WEBHOOK_TEST_EVENT_TYPE,
  type AnyWebhookEventType,
} from '../../domain/webhooks';

const id = (description: string) => z.string().uuid().meta({ description });
const link = (description: string) => z.string().startsWith('/api/').meta({ description: `${description} (an API path: prefix the API's public URL; needs a credential with the read scope)` });
const person = (description: string) => z.string().uuid().nullable().meta({ description });

const renderUploaded = z.object({
  workspaceId: id('The workspace the render was uploaded to'),
  projectId: id('Its project'),
  renderId: id('The render'),
  fileName: z.string(),
  fileSize: z.number().int().nonnegative().meta({ description: 'Bytes of the stored original' }),
  width: z.number().int().positive().nullable(),
  height: z.number().int().positive().nullable(),
  href: link('The render and its lineage'),
});

const job = z.object({
  workspaceId: id('The workspace the job runs in'),
  projectId: z.string().uuid().nullable().meta({ description: 'Its project; null for Enhance Renders jobs, whose place is a draft' }),
  jobId: id('The job, as the Activity list and the status calls name it'),
  kind: z.enum(WEBHOOK_JOB_KINDS).meta({ description: 'image: AI image edit; clip: 5-second clip; assembly: social video; enhance: Enhance Renders model run' }),
  status: z.enum(['started', 'completed', 'failed', 'cancelled']).meta({ description: 'job.failed carries failed or cancelled' }),
  startedBy: person('The member who started it'),
  approvalId: z.string().uuid().nullable().meta({ description: 'Completed image, clip and assembly jobs: the item now waiting for approval' }),
  draftId: z.string().uuid().nullable().meta({ description: 'Enhance Renders jobs: the draft' }),
  draftImageId: z.string().uuid().nullable().meta({ description: 'Enhance Renders jobs: the draft image' }),
  error: z.string().nullable().meta({ description: 'Failed or cancelled jobs: the reason shown to users' }),
  href: link("The job's status call"),
});

const approval = z.object({
  workspaceId: id('The workspace'),
  projectId: id('The project the item is for'),
  approvalId: id('The pending item'),
  kind: z.enum(WEBHOOK_ITEM_KINDS),
  status: z.enum(['pending', 'approved', 'rejected', 'expired']),
  fileName: z.string(),
  credits: z.number().int().nonnegative().meta({ description: 'The full cost: charged on approval, released on rejection or expiry' }),
  deadline: z.iso.datetime().meta({ description: 'When the item expires unless decided' }),
  createdBy: person('The member whose generation made the item'),
  decidedBy: person('Who approved or rejected it; null for approval.created and approval.expired'),
  contentId: z.string().uuid().nullable().meta({ description: 'approval.approved: the saved content item (its original can now be downloaded)' }),
  href: link("approval.approved: the saved item's lineage; otherwise the approval queue"),
});

const creditsLow = z.object({
  workspaceId: id('The workspace'),
  balance: z.number().int().meta({ description: 'The balance after the change that crossed below the threshold' }),
  previousBalance: z.number().int(),
  reserved: z.number().int().nonnegative().meta({ description: 'Credits held by pending items (available = balance - reserved)' }),
  threshold: z.number().int().positive(),
  href: link('The credit summary'),
});

const purchaseCompleted = z.object({
  workspaceId: id('The workspace credited'),
  purchaseId: id('The purchase'),
  packageId: z.string(),
  credits: z.number().int().positive(),
  amount: z.number().int().nonnegative().meta({ description: "The amount paid in the currency's smallest unit" }),
  currency: z.string(),
  purchasedBy: person('The member who bought it'),
  href: link('The purchase'),
});

const memberJoined = z.object({
  workspaceId: id('The workspace'),
  userId: id('The new member'),
  role: z.enum(['admin', 'member', 'viewer']),
  invitationId: z.string().uuid().nullable(),
  href: link("The workspace's members"),
});

const comment = z.object({
  workspaceId: id('The workspace'),
  itemKind: z.enum(['render', 'image', 'clip', 'compiled_video', 'generated', 'approval']).meta({ description: 'What the thread is about; approval: an item still waiting for approval' }),
  itemId: id('The item (for approval: the pending item, as the approval queue names it)'),
  threadId: id('The thread'),
  commentId: z.string().uuid().nullable().meta({ description: 'comment.created: the new comment; comment.resolved: null' }),
  opensThread: z.boolean().meta({ description: 'comment.created: whether the comment opened the thread (false: a reply)' }),
  by: person('Who wrote the comment, or resolved the thread'),
  excerpt: z.string().max(280).nullable().meta({ description: "comment.created: the comment's first 280 characters" }),
  pin: z
    .object({ x: z.number().optional(), y: z.number().optional(), w: z.number().optional(), h: z.number().optional(), t: z.number().optional() })
    .nullable()
    .meta({ description: 'A point or rectangle in fractions of the picture, and/or a time in seconds' }),
  mentions: z.array(z.string().uuid()).meta({ description: 'The members the comment mentions' }),
  href: link("The item's comment threads"),
});

const guest = z.object({ name: z.string(), email: z.string() }).meta({ description: 'Who the guest said they are on the review page' });
const pinSchema = z
  .object({ x: z.number().optional(), y: z.number().optional(), w: z.number().optional(), h: z.number().optional(), t: z.number().optional() })
  .nullable()
  .meta({ description: 'A point or rectangle in fractions of the picture, and/or a time in seconds' });

const reviewComment = z.object({
  workspaceId: id('The workspace'),
  reviewLinkId: id('The review link the guest came through'),
  approvalId: id('The pending item on the link the comment is about'),
  itemKind: z.enum(['render', 'image', 'clip', 'compiled_video', 'generated', 'approval']).meta({ description: 'What the thread is about; approval: an item still waiting for approval' }),
  itemId: id('The item the thread belongs to'),
  threadId: id('The thread'),
  commentId: id('The new comment'),
  opensThread: z.boolean().meta({ description: 'Whether the comment opened the thread (false: a reply)' }),
  guest,
  excerpt: z.string().max(280).meta({ description: "The comment's first 280 characters" }),
  pin: pinSchema,
  href: link("The item's comment threads"),
});

const reviewDecided = z.object({
  workspaceId: id('The workspace'),
  reviewLinkId: id('The review link the guest came through'),
  approvalId: id('The pending item decided on'),
  decision: z.enum(['approve', 'request_changes']),
  outcome: z.enum(['approved', 'approval_counted', 'changes_requested', 'studio_asked']).meta({
    description:
      'approved: approved and charged; approval_counted: one of the approvals the policy needs; changes_requested: rejected and the next version started; studio_asked: the workspace\'s rules refused, nothing changed and its members were asked',
  }),
  guest,
  request: z.string().nullable().meta({ description: 'The requested change (request_changes), else null' }),
  href: link('The review link'),
});

const webhookTest = z.object({
  workspaceId: id('The workspace'),
  endpointId: id('The endpoint the test was sent to'),
  message: z.string(),
});

const DATA_SCHEMAS: Record<AnyWebhookEventType, z.ZodObject> = {
  'render.uploaded': renderUploaded,
  'job.started': job,
  'job.completed': job,
  'job.failed': job,
  'approval.created': approval,
  'approval.approved': approval,
  'approval.rejected': approval,
  'approval.expired': approval,
  'credits.low': creditsLow,
  'purchase.completed': purchaseCompleted,
  'member.joined': memberJoined,
  'comment.created': comment,
  'comment.resolved': comment,
  'review.comment_created': reviewComment,
  'review.decided': reviewDecided,
  [WEBHOOK_TEST_EVENT_TYPE]: webhookTest,
};

function payloadSchema(type: AnyWebhookEventType) {
  return z.object({
    type: z.literal(type),
    version: z.literal(WEBHOOK_PAYLOAD_VERSION).meta({ description: 'The payload schema version' }),
    timestamp: z.iso.datetime().meta({ description: 'When the change happened' }),
    data: DATA_SCHEMAS[type],
  });
}

export const ALL_WEBHOOK_TYPES: readonly AnyWebhookEventType[] = [...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE];

/** `render.uploaded` -> `WebhookRenderUploaded`: the payload's component name. */
function componentName(type: string): string {
  return `Webhook${type
    .split(/[^A-Za-z0-9]+/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')}`;
}

/**
 * The JSON body of a delivery of each type. The id in each schema's metadata (set once, here: zod's global registry
 * holds it) makes it a component the document's webhook refers to.
 */
export const WEBHOOK_PAYLOAD_SCHEMAS = Object.fromEntries(ALL_WEBHOOK_TYPES.map((type) => [type, payloadSchema(type).meta({ id: componentName(type) })])) as Record<
  AnyWebhookEventType,
  ReturnType<typeof payloadSchema>
>;

const signatureHeaders = z.object({
  'webhook-id': z.string().meta({ description: 'The event id: the same on every retry and on "Send again", so receivers can de-duplicate' }),
  'webhook-timestamp': z.string().meta({ description: 'Seconds since the epoch when this attempt was signed; reject old ones to stop replays' }),
  'webhook-signature': z.string().meta({
    description: 'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `<webhook-id>.<webhook-timestamp>.<body>` (two during a secret rotation); verify with any Standard Webhooks library',
  }),
});

/** Adds every event type to the registry's `webhooks` section, its payload as a component. */
export function registerWebhookEvents(registry: OpenAPIRegistry): void {
  for (const type of ALL_WEBHOOK_TYPES) {
    const schema = WEBHOOK_PAYLOAD_SCHEMAS[type];
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `webhook${componentName(type).slice('Webhook'.length)}`,
      summary: WEBHOOK_EVENT_DESCRIPTIONS[type],
      description:
        `Sent to the workspace's endpoints subscribed to \`${type}\`${type === WEBHOOK_TEST_EVENT_TYPE ? ' (only by "Send test event", whatever the endpoint subscribes to)' : ''}, ` +
        'signed as the Standard Webhooks specification says. Answer 2xx within the timeout; other answers are retried with backoff ' +
        '(410 Gone disables the endpoint). See docs/webhooks.md.',
      tags: ['Webhooks'],
      request: { headers: signatureHeaders, body: { required: true, content: { 'application/json': { schema } } } },
      responses: {
        '200': { description: 'Any 2xx answer acknowledges the delivery' },
        '410': { description: 'Gone: the endpoint is disabled and nothing more is sent to it' },
      },
    });
  }
}
