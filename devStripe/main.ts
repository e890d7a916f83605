/**
 * The local test-mode checkout as a service (`node --import tsx devStripe/main.ts`), run by `npm start` when no
 * Stripe key is set and NODE_ENV is not production (config/env.ts localStripeFrom; scripts/lib/localStripe.js starts
 * it under the supervisor). It speaks Stripe's API to the app (devStripe/localStripe.ts) with the key and webhook
 * secret `npm start` gave both of them, delivers signed webhooks to the app and retries them as Stripe does, and keeps
 * its sessions and refunds in a file so a restart does not forget a checkout under way.
 *
 * Arguments: --port <n> --host <address> --public-url <address browsers use> --webhook-url <the app's webhook>
 * --state-file <path>. Environment: STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, STRIPE_PRICE_* (prices it knows, at
 * their packages' displayed amounts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { exitOnConfigError, stripePriceIdsFrom } from '../config/env';
import { logger } from '../config/logger';
import { displayPriceCents, findCreditPackage } from '../domain/billing';
import { LocalStripe, type LocalStripeState } from './localStripe';

/** Waits between deliveries of an event the app's webhook did not take (Stripe retries for days; a dev box less). */
const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000];

function required(name: string, value: string | undefined): string {
  if (!value) throw new Error(`local stripe: ${name} is required`);
  return value;
}

function readState(file: string): LocalStripeState | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LocalStripeState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') logger.warn({ err, file }, 'local stripe: its saved state cannot be read; starting empty');
    return null;
  }
}

function writeState(file: string, state: LocalStripeState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(state), { mode: 0o600 });
  fs.renameSync(temp, file);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      'public-url': { type: 'string' },
      'webhook-url': { type: 'string' },
      'state-file': { type: 'string' },
    },
  });
  const stateFile = values['state-file'];
  // the packages' configured Price ids exist here at the amounts the app shows (its price check then passes)
  const prices = Object.fromEntries(
    Object.entries(stripePriceIdsFrom()).flatMap(([packageId, priceId]) => {
      const pkg = findCreditPackage(packageId);
      return pkg ? [[priceId, displayPriceCents(pkg.priceCents)]] : [];
    }),
  );
  let stripe: LocalStripe | null = null;
  const save = () => {
    if (stateFile && stripe) writeState(stateFile, stripe.snapshot());
  };
  stripe = new LocalStripe({
    secretKey: required('STRIPE_SECRET_KEY', process.env.STRIPE_SECRET_KEY),
    webhookSecret: required('STRIPE_WEBHOOK_SECRET', process.env.STRIPE_WEBHOOK_SECRET),
    webhookUrl: required('--webhook-url', values['webhook-url']),
    publicBaseUrl: values['public-url'],
    prices,
    retryDelaysMs: RETRY_DELAYS_MS,
    record: false,
    onChange: save,
    onDeliveryProblem: (problem) => logger.warn({ problem }, 'local stripe: the app did not take a webhook'),
  });
  const saved = stateFile ? readState(stateFile) : null;
  if (saved) stripe.restore(saved);
  await stripe.start(Number(values.port), values.host);
  logger.info({ url: stripe.baseUrl, checkoutPages: stripe.publicBaseUrl, webhookUrl: stripe.webhookUrl, sessions: stripe.sessions.size }, 'local stripe (test mode: no real payment) listening');

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'local stripe stopping');
    stripe
      .close()
      .then(() => {
        save();
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'local stripe: stopping failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  if (exitOnConfigError(err)) return;
  logger.error({ err }, 'local stripe failed to start');
  process.exit(1);
});
