/**
 * The Stripe SDK, configured from the environment: STRIPE_SECRET_KEY for API calls, STRIPE_API_BASE to point the SDK
 * at another host (tests run a local server that speaks the Stripe paths used), STRIPE_WEBHOOK_SECRET for webhooks.
 */
import Stripe from 'stripe';
import type { AppConfig } from '../../config/env';

export type StripeConfig = Pick<AppConfig, 'stripeSecretKey' | 'stripeApiBase'>;

/** host / port / protocol options from a base URL such as http://127.0.0.1:4242. */
function apiBaseOptions(base: string): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (!base) return {};
  const url = new URL(base);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol };
}

const clients = new Map<string, Stripe>();

/** One client per key and base (the SDK keeps its own connection pool); null when no secret key is configured. */
export function stripeClient(config: StripeConfig): Stripe | null {
  if (!config.stripeSecretKey) return null;
  const cacheKey = `${config.stripeSecretKey}\u0000${config.stripeApiBase}`;
  let client = clients.get(cacheKey);
  if (!client) {
    client = new Stripe(config.stripeSecretKey, { ...apiBaseOptions(config.stripeApiBase), maxNetworkRetries: 2, timeout: 20_000 });
    clients.set(cacheKey, client);
  }
  return client;
}

/** Signature checks need no API key: the SDK's webhooks helper verifies against the endpoint secret alone. */
export const stripeWebhooks = Stripe.webhooks;
