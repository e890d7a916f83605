import { api } from './client';

export interface CheckoutSessionInput {
  packageId: string;
  credits: number;
  userId: string;
  email: string;
  successUrl: string;
  cancelUrl: string;
}

/** Starts a Stripe Checkout session for a credit package; the browser then goes to the returned url. */
export async function createCheckoutSession(input: CheckoutSessionInput): Promise<string> {
  const body = await api.post('stripe/create-checkout-session', { json: input }).json<{ success?: boolean; url?: string }>();
  if (!body.url) throw new Error('No checkout url in the reply');
  return body.url;
}
