/**
 * Webhook endpoints as the API answers them and the Webhooks page shows them (DESIGN.md "Integrations"): shared by
 * the endpoints service (services/integrations/webhookEndpoints.ts), its routes and the front end. The signing
 * secret itself is never part of a view: it is answered once, at creation and at each rotation.
 */
import type { WebhookEventType } from './webhooks';

/** Endpoints one workspace may register (GitHub allows 20 hooks per event on a repository). */
export const MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE = 20;
/** How long the previous secret keeps signing after a rotation. */
export const WEBHOOK_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;
/** Characters of the secret a view shows, so an admin can tell which secret a receiver has (`whsec_` + 4). */
export const WEBHOOK_SECRET_PREFIX_LENGTH = 10;

export type WebhookEndpointStatus = 'enabled' | 'disabled';

export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string;
  eventTypes: WebhookEventType[];
  status: WebhookEndpointStatus;
  /** why it is disabled, in words a user reads ("Turned off by an admin.", "The receiver answered 410 Gone." ...) */
  disabledReason: string | null;
  disabledAt: string | null;
  consecutiveFailures: number;
  secretPrefix: string;
  /** while a rotated-out secret still signs (24 h after the rotation), when it stops */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  createdBy: { name: string; email: string } | null;
}

/**
 * Which URLs this server sends webhooks to (services/integrations/webhookTargets.ts decides; the endpoints list answers
 * it so the form can say it): https:// to public addresses always.
 */
export interface WebhookTargetRule {
  /** plain http:// (and https://) to a loopback address named literally (localhost, 127.0.0.1, [::1]): NODE_ENV is not production */
  loopback: boolean;
  /** private, loopback and link-local addresses over https:// (WEBHOOK_ALLOW_PRIVATE_TARGETS=on) */
  privateAddresses: boolean;
}

/** The endpoint form's hint for the URL: what the server accepts, in the user's words. */
export function webhookUrlHint(rule: WebhookTargetRule): string {
  const https = rule.privateAddresses ? 'An https:// address' : 'A public https:// address';
  const loopback = rule.loopback ? ' or, while developing, http:// to localhost, 127.0.0.1 or [::1]' : '';
  const privateNote = rule.privateAddresses ? ' Private network addresses are allowed on this server.' : '';
  return `${https} your receiver answers on${loopback}.${privateNote}`;
}

export const WEBHOOK_MSG = {
  endpointNotFound: 'That webhook endpoint does not exist in this workspace.',
  urlRequired: 'URL is required',
  urlTooLong: `The URL must be ${WEBHOOK_URL_MAX_LENGTH} characters or fewer.`,
  descriptionTooLong: `The description must be ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters or fewer.`,
  eventTypesRequired: 'Choose at least one event type.',
  eventTypesNotList: 'eventTypes must be a list of event types, for example ["job.completed"].',
  unknownEventType: (value: unknown, known: readonly string[]) => `Unknown event type ${JSON.stringify(value)}. Choose from: ${known.join(', ')}.`,
  enabledNotBoolean: 'enabled must be true or false.',
  nothingToChange: 'Nothing to change: send url, description, eventTypes or enabled.',
  tooMany: `A workspace can have at most ${MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE} webhook endpoints. Delete one you no longer use first.`,
  disabledByAdmin: 'Turned off by an admin of the workspace.',
} as const;

export const WEBHOOK_CODES = {
  endpointNotFound: 'WEBHOOK_ENDPOINT_NOT_FOUND',
  tooMany: 'WEBHOOK_ENDPOINT_LIMIT',
} as const;
