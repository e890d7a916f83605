/**
 * The Stripe the tests talk to: the local Stripe-speaking server `npm start` runs as its test-mode checkout
 * (devStripe/localStripe.ts), with the tests' fixed key and webhook secret. Tests point the app's SDK at it through
 * the config (stripeApiBase), set its webhookUrl, and build and deliver events themselves where they need to
 * (replays, refunds, async payments).
 */
import { LocalStripe, type LocalStripeOptions } from '../../devStripe/localStripe';

export { parseStripeForm, type DeliveryResult, type RecordedRequest } from '../../devStripe/localStripe';
export { LocalStripe as FakeStripe };
export type FakePrice = NonNullable<LocalStripeOptions['prices']>[string];

export const FAKE_STRIPE_SECRET_KEY = 'sk_test_fake_render_studio';
export const FAKE_WEBHOOK_SECRET = 'whsec_fake_render_studio';

export type FakeStripeOptions = Partial<LocalStripeOptions>;

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<LocalStripe> {
  return new LocalStripe({ webhookSecret: FAKE_WEBHOOK_SECRET, ...options }).start();
}
