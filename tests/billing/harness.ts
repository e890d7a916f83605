/**
 * The API with Stripe pointed at the local fake (tests/support/fakeStripe.ts): checkout sessions go to the fake,
 * and the fake delivers signed webhooks back to this app.
 */
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser, type TestUser } from '../support/accounts';
import { testKnex } from '../support/db';
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe, type FakeStripe, type FakeStripeOptions } from '../support/fakeStripe';
import { request, serve, type JsonResponse, type TestServer } from '../support/http';

export const APP_PUBLIC_URL = 'http://studio.example.test';

export interface BillingHarness {
  fake: FakeStripe;
  server: TestServer;
  baseUrl: string;
  knex: Knex;
  config: AppConfig;
  close: () => Promise<void>;
}

export async function startBillingHarness(
  overrides: Partial<AppConfig> = {},
  fakeOptions: FakeStripeOptions = {},
  appOptions: Pick<AppDeps, 'taskQueues'> = {},
): Promise<BillingHarness> {
  const fake = await startFakeStripe(fakeOptions);
  const config: AppConfig = {
    ...loadConfig(),
    publicUrl: APP_PUBLIC_URL,
    stripeSecretKey: FAKE_STRIPE_SECRET_KEY,
    stripeWebhookSecret: fake.webhookSecret,
    stripeApiBase: fake.baseUrl,
    ...overrides,
  };
  const knex = testKnex();
  const server = await serve(createApp({ config, knex, logger, ...appOptions }));
  fake.webhookUrl = `${server.baseUrl}/api/stripe/webhook`;
  return {
    fake,
    server,
    baseUrl: server.baseUrl,
    knex,
    config,
    close: async () => {
      await server.close();
      await fake.close();
    },
  };
}

export interface CheckoutPayload {
  packageId?: string;
  priceId?: string;
  userId?: string;
  email?: string;
  credits?: number;
  successUrl?: string;
  cancelUrl?: string;
}

export function checkout(h: BillingHarness, user: TestUser | null, payload: CheckoutPayload): Promise<JsonResponse> {
  return request(h.baseUrl, '/api/stripe/create-checkout-session', { token: user?.token, json: payload });
}

/** A user who went through checkout for `packageId`: the session exists at the fake and the purchase is open. */
export async function userWithOpenCheckout(h: BillingHarness, packageId = 'medium'): Promise<{ user: TestUser; sessionId: string }> {
  const user = await createTestUser(h.baseUrl);
  const res = await checkout(h, user, { packageId, userId: user.id, email: user.email });
  if (res.status !== 200) throw new Error(`checkout: ${res.status} ${JSON.stringify(res.body)}`);
  return { user, sessionId: res.body.sessionId as string };
}

export async function balance(knex: Knex, userId: string): Promise<{ credits: number; reserved: number; purchased: number }> {
  const row = await knex('profiles').where({ id: userId }).first('credits', 'reserved_credits', 'total_credits_purchased');
  return { credits: row.credits, reserved: row.reserved_credits, purchased: row.total_credits_purchased };
}

export async function ledger(knex: Knex, userId: string): Promise<Array<{ transaction_type: string; amount: number; idempotency_key: string; metadata: Record<string, unknown>; created_by: string | null; created_by_email: string }>> {
  return knex('credit_transactions')
    .where({ workspace_id: userId })
    .orderBy('created_at')
    .select('transaction_type', 'amount', 'idempotency_key', 'metadata', 'created_by', 'created_by_email');
}

export async function purchaseRow(knex: Knex, sessionId: string): Promise<Record<string, any>> {
  return knex('credit_purchases').where({ stripe_session_id: sessionId }).first();
}
