/**
 * Signing as the Standard Webhooks specification says, with the `standardwebhooks` package: the `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` headers, so a receiver verifies with any Standard Webhooks library.
 * During a secret rotation both secrets sign and `webhook-signature` carries both signatures, space-separated
 * (the specification's form for several signatures), so a receiver on either secret accepts.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + 32 random bytes in base64 (the form Standard Webhooks libraries read). */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers for `body` sent as message `messageId` at `at`, signed with every secret in `secrets` (current first). */
export function signWebhook(input: { secrets: readonly string[]; messageId: string; at: Date; body: string }): SignedHeaders {
  if (input.secrets.length === 0) throw new Error('signWebhook needs at least one secret');
  const signatures = input.secrets.map((secret) => new Webhook(secret).sign(input.messageId, input.at, input.body));
  return {
    'webhook-id': input.messageId,
    'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

/** The secrets that sign now: the current one, and the previous one while its 24 hours of grace last. */
export function signingSecrets(endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null }, now = new Date()): string[] {
  const previousValid = endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt.getTime() > now.getTime();
  return previousValid ? [endpoint.secret, endpoint.previousSecret as string] : [endpoint.secret];
}
