/**
 * Credit purchases through Stripe Checkout (DESIGN.md "Billing"). The server decides credits and amount from the
 * package id alone; fulfilment happens only in the webhook, verified by signature on the raw body. Every webhook is
 * one PostgreSQL transaction: the event row (Stripe's event id, so a replay or a concurrent duplicate changes
 * nothing), the purchase row (locked), and the ledger change (idempotency key = the Checkout Session id).
 * Lock order: purchase row, then the profile row (inside the credit ledger), like every other credit writer after.
 */
import type { Knex } from 'knex';
import type Stripe from 'stripe';
import type { AppConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import {
  BILLING_MSG,
  PACKAGE_CURRENCY,
  displayPriceCents,
  findCreditPackage,
  purchasingMode,
  type CheckoutProgress,
  type PurchaseStatusReply,
  type PurchaseView,
  type PurchasingMode,
} from '../../domain/billing';
import type { CreditPackage } from '../../domain/constants';
import { DomainError, UnavailableHereError } from '../../domain/errors';
import { CreditPurchase } from '../../db/models/CreditPurchase';
import { StripeEvent } from '../../db/models/StripeEvent';
import { addCredits, getCreditSummary, refundPurchasedCredits } from './credits';
import { stripeClient, stripeWebhooks } from './stripeClient';
import type { PaymentRefundInput, UncreditableReason } from '../../domain/workflowContracts/paymentRefund';
import { recordUncreditablePayment } from './paymentRefunds';
import { checkPackagePrice } from './stripePrices';
import { countText } from '../../domain/plural';
import { webhookLinks } from '../integrations/webhookEvents';
import { recordWebhookEvent } from '../integrations/webhookOutbox';

// ---------------------------------------------------------------------------------------------------------------
// Errors

export class StripeNotConfiguredError extends UnavailableHereError {
  constructor() {
    super(503, 'STRIPE_NOT_CONFIGURED', BILLING_MSG.stripeNotConfigured);
  }
}

export class UnknownPackageError extends DomainError {
  constructor() {
    super(400, 'UNKNOWN_PACKAGE', BILLING_MSG.unknownPackage);
  }
}

/** A success or cancel URL outside the app's own origin (PUBLIC_URL): no open redirect through Checkout. */
export class ForeignReturnUrlError extends DomainError {
  constructor() {
    super(400, 'INVALID_RETURN_URL', BILLING_MSG.foreignReturnUrl);
  }
}

/** Stripe refused or could not be reached; the client shows the spec's text. */
export class CheckoutSessionFailedError extends DomainError {
  constructor() {
    super(502, 'CHECKOUT_FAILED', BILLING_MSG.checkoutFailed);
  }
}

/** The package's configured Stripe Price does not charge what the package shows (or could not be checked): not sold. */
export class PackagePriceMismatchError extends UnavailableHereError {
  constructor() {
    super(503, 'PACKAGE_PRICE_MISMATCH', BILLING_MSG.packageUnavailable);
  }
}

export class WebhookSignatureError extends DomainError {
  constructor() {
    super(400, 'INVALID_SIGNATURE', 'Invalid Stripe signature');
  }
}

export class PurchaseNotFoundError extends DomainError {
  constructor() {
    super(404, 'PURCHASE_NOT_FOUND', BILLING_MSG.purchaseNotFound);
  }
}

/** The refund of an uncreditable payment could not be started (Temporal unreachable): 503, so Stripe retries. */
export class RefundStartError extends DomainError {
  constructor(readonly reason: unknown) {
    super(503, 'REFUND_START_FAILED', 'The payment cannot be credited and its refund could not be started; retry later');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Checkout

export type BillingConfig = Pick<AppConfig, 'publicUrl' | 'stripeSecretKey' | 'stripeApiBase' | 'stripeWebhookSecret' | 'stripePriceIds'>;

/** Starts (or joins) the durable refund of a payment nothing could be credited for (services/billing/paymentRefunds.ts). */
export type PaymentRefundStarter = (input: PaymentRefundInput) => Promise<void>;

export interface BillingDeps {
  knex: Knex;
  config: BillingConfig;
  logger: Logger;
  /** Without it, a payment for a deleted account fails the webhook (Stripe retries) rather than being dropped. */
  startRefund?: PaymentRefundStarter;
}

export interface CheckoutInput {
  /** The buyer: an owner or admin of the workspace (route-checked), recorded as the actor of the purchase row. */
  user: { id: string; email: string };
  /**
   * The workspace (account) the credits are for; defaults to the buyer's personal workspace (whose id is theirs).
   * The session's metadata carries it as `workspaceId`, and its client_reference_id is it.
   */
  workspaceId?: string;
  packageId: string;
  successUrl?: string;
  cancelUrl?: string;
}

const SESSION_ID_PLACEHOLDER = '{CHECKOUT_SESSION_ID}';

/** How credits are bought here: live, test (no real payment) or unavailable (the Buy buttons say why before a click). */
export function purchasingOf(config: Pick<AppConfig, 'stripeSecretKey' | 'stripeWebhookSecret'>): PurchasingMode {
  return purchasingMode({ secretKey: config.stripeSecretKey, webhookSecret: config.stripeWebhookSecret });
}

/** The credit package with its Stripe Price when one is configured (STRIPE_PRICE_<ID>). */
export function sellablePackage(config: Pick<AppConfig, 'stripePriceIds'>, packageId: string): CreditPackage & { stripePriceId: string | null } {
  const pkg = findCreditPackage(packageId);
  if (!pkg) throw new UnknownPackageError();
  return { ...pkg, stripePriceId: config.stripePriceIds[pkg.id] ?? null };
}

/**
 * `raw` (absolute or relative to PUBLIC_URL) when it stays on the app's own origin, normalised; otherwise refused.
 * The normalised form goes to Stripe, so what was checked is what the browser is sent to.
 */
export function ownReturnUrl(publicUrl: string, raw: string): string {
  const origin = new URL(publicUrl).origin;
  let url: URL;
  try {
    url = new URL(raw, publicUrl);
  } catch {
    throw new ForeignReturnUrlError();
  }
  if (url.origin !== origin || url.username !== '' || url.password !== '') throw new ForeignReturnUrlError();
  return url.href;
}

/** The success URL carries the session id (Stripe fills the placeholder in), so the app can follow the purchase. */
function withSessionIdPlaceholder(href: string): string {
  if (href.includes(SESSION_ID_PLACEHOLDER)) return href;
  const url = new URL(href);
  const search = `${url.search ? `${url.search}&` : '?'}session_id=${SESSION_ID_PLACEHOLDER}`;
  return `${url.origin}${url.pathname}${search}${url.hash}`;
}

/** The Billing tab; a team workspace's purchase returns to that workspace (`?workspace=`, the front end's address of it). */
export function defaultReturnUrl(publicUrl: string, outcome: 'success' | 'cancelled', workspaceId?: string): string {
  const suffix = outcome === 'success' ? `&session_id=${SESSION_ID_PLACEHOLDER}` : '';
  const workspace = workspaceId ? `&workspace=${encodeURIComponent(workspaceId)}` : '';
  return new URL(`/?view=account&tab=billing&purchase=${outcome}${workspace}${suffix}`, publicUrl).href;
}

/**
 * Creates a payment-mode Checkout Session for the package and records the purchase as open, for the workspace.
 * Credits and amount come from the package alone; the buyer is the session's user (route-checked as an owner or
 * admin of the workspace). Metadata: `workspaceId` (the account credited), `userId` (the buyer: what it always
 * carried, the account itself before workspaces, so sessions from then are still fulfilled), package and credits.
 */
export async function createCheckoutSession(deps: BillingDeps, input: CheckoutInput): Promise<{ url: string; sessionId: string }> {
  const stripe = stripeClient(deps.config);
  // without the webhook secret nothing paid could ever be credited: nothing is sold (GET /api/stripe/purchasing says so)
  if (!stripe || purchasingOf(deps.config) === 'unavailable') throw new StripeNotConfiguredError();
  const pkg = sellablePackage(deps.config, input.packageId);
  if (pkg.stripePriceId) {
    // never a silent wrong charge: the Price must charge the displayed amount, once, in NZD (the check logs why not)
    const check = await checkPackagePrice(deps.config, pkg, deps.logger);
    if (!check?.ok) {
      deps.logger.error({ packageId: pkg.id, priceId: pkg.stripePriceId, problem: check?.problem }, 'checkout refused: the package price does not match');
      throw new PackagePriceMismatchError();
    }
  }
  const workspaceId = input.workspaceId ?? input.user.id;
  const team = workspaceId === input.user.id ? undefined : workspaceId;
  const successUrl = withSessionIdPlaceholder(ownReturnUrl(deps.config.publicUrl, input.successUrl ?? defaultReturnUrl(deps.config.publicUrl, 'success', team)));
  const cancelUrl = ownReturnUrl(deps.config.publicUrl, input.cancelUrl ?? defaultReturnUrl(deps.config.publicUrl, 'cancelled', team));
  const amountCents = displayPriceCents(pkg.priceCents);
  const metadata = { userId: input.user.id, workspaceId, packageId: pkg.id, credits: String(pkg.totalCredits) };

  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create({
      mode: 'payment',
      line_items: [
        pkg.stripePriceId
          ? { price: pkg.stripePriceId, quantity: 1 }
          : {
              quantity: 1,
              price_data: {
                currency: PACKAGE_CURRENCY,
                unit_amount: amountCents,
                product_data: { name: `${pkg.name} (${pkg.totalCredits} credits)` },
              },
            },
      ],
      client_reference_id: workspaceId,
      customer_email: input.user.email,
      metadata,
      payment_intent_data: { metadata },
      success_url: successUrl,
      cancel_url: cancelUrl,
    });
  } catch (err) {
    deps.logger.error({ err, packageId: pkg.id }, 'stripe checkout session create failed');
    throw new CheckoutSessionFailedError();
  }
  if (!session.url) {
    deps.logger.error({ sessionId: session.id }, 'stripe checkout session has no url');
    throw new CheckoutSessionFailedError();
  }
  await CreditPurchase.query(deps.knex).insert({
    // the account credited: the workspace's purchases ("rejection requires a purchase" reads them per workspace)
    workspaceId,
    metadata: { buyerId: input.user.id },
    packageId: pkg.id,
    credits: pkg.totalCredits,
    amountCents: session.amount_total ?? amountCents,
    currency: session.currency ?? PACKAGE_CURRENCY,
    stripeSessionId: session.id,
    stripePriceId: pkg.stripePriceId,
    status: 'open',
  });
  return { url: session.url, sessionId: session.id };
}

// ---------------------------------------------------------------------------------------------------------------
// Webhook

export type WebhookOutcome =
  | 'credited'
  | 'already_credited'
  | 'awaiting_payment'
  | 'payment_failed'
  | 'expired'
  | 'refunded'
  | 'refund_already_applied'
  | 'refund_scheduled'
  | 'refund_already_scheduled'
  | 'unknown_session'
  | 'unknown_payment'
  | 'duplicate_event'
  | 'ignored';

export interface WebhookResult {
  eventId: string;
  type: string;
  outcome: WebhookOutcome;
}

/** Verifies the signature on the exact bytes Stripe sent, then applies the event once. */
export async function handleStripeWebhook(deps: BillingDeps, rawBody: Buffer, signature: string | undefined): Promise<WebhookResult> {
  if (!deps.config.stripeWebhookSecret) throw new StripeNotConfiguredError();
  if (!signature) throw new WebhookSignatureError();
  let event: Stripe.Event;
  try {
    event = stripeWebhooks.constructEvent(rawBody, signature, deps.config.stripeWebhookSecret);
  } catch {
    throw new WebhookSignatureError();
  }
  const result = await applyStripeEvent(deps.knex, event, deps.startRefund);
  deps.logger.info({ eventId: event.id, type: event.type, outcome: result.outcome }, 'stripe webhook');
  return result;
}

/**
 * One transaction: the event row first (a duplicate finds it and stops), then the event's effect. A refund it
 * needs is started before the commit, so a failed start rolls the event back and Stripe's retry tries again.
 */
export async function applyStripeEvent(knex: Knex, event: Stripe.Event, startRefund?: PaymentRefundStarter): Promise<WebhookResult> {
  return knex.transaction(async (trx) => {
    // a concurrent delivery of the same event waits here on the primary key until this one commits
    const inserted: Array<{ id: string }> = await trx(StripeEvent.tableName)
      .insert({ id: event.id, type: event.type, payload: event })
      .onConflict('id')
      .ignore()
      .returning('id');
    if (inserted.length === 0) return { eventId: event.id, type: event.type, outcome: 'duplicate_event' };
    const outcome = await applyEventEffect(trx, event, startRefund);
    await StripeEvent.query(trx).patch({ processedAt: trx.fn.now() as unknown as Date }).where({ id: event.id });
    return { eventId: event.id, type: event.type, outcome };
  });
}

async function applyEventEffect(trx: Knex.Transaction, event: Stripe.Event, startRefund: PaymentRefundStarter | undefined): Promise<WebhookOutcome> {
  switch (event.type) {
    case 'checkout.session.completed':
      // delayed payment methods complete the session unpaid; async_payment_succeeded follows
      return event.data.object.payment_status === 'paid' ? fulfilPurchase(trx, event.data.object, event.id, startRefund) : notePaymentPending(trx, event.data.object);
    case 'checkout.session.async_payment_succeeded':
      return fulfilPurchase(trx, event.data.object, event.id, startRefund);
    case 'checkout.session.async_payment_failed':
      return closeOpenPurchase(trx, event.data.object, 'failed');
    case 'checkout.session.expired':
      return closeOpenPurchase(trx, event.data.object, 'expired');
    case 'charge.refunded':
      return reverseRefundedCredits(trx, event.data.object, event.id);
    default:
      return 'ignored';
  }
}

const CREDITED: ReadonlySet<string> = new Set(['completed', 'refunded', 'partially_refunded']);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function paymentIntentId(value: string | { id: string } | null | undefined): string | null {
  if (!value) return null;
  return typeof value === 'string' ? value : value.id;
}

/**
 * The purchase of a Checkout Session, locked. A session this app created but whose row is missing (the insert
 * after Stripe's answer failed) is recorded from its metadata; sessions of anything else are not ours.
 */
async function lockPurchaseForSession(trx: Knex.Transaction, session: Stripe.Checkout.Session): Promise<CreditPurchase | null> {
  const found = await CreditPurchase.query(trx).findOne({ stripe_session_id: session.id }).forUpdate();
  if (found) return found;
  const userId = sessionAccount(session);
  const pkg = findCreditPackage(session.metadata?.packageId ?? '');
  if (!pkg || !userId || !UUID_RE.test(userId) || session.client_reference_id !== userId) return null;
  const profile = await trx('profiles').where({ id: userId }).first('id');
  if (!profile) return null;
  const buyer = sessionBuyer(session);
  await trx(CreditPurchase.tableName)
    .insert({
      workspace_id: userId,
      metadata: JSON.stringify(buyer ? { buyerId: buyer } : {}),
      package_id: pkg.id,
      credits: pkg.totalCredits,
      amount_cents: session.amount_total ?? displayPriceCents(pkg.priceCents),
      currency: session.currency ?? PACKAGE_CURRENCY,
      stripe_session_id: session.id,
      status: 'open',
    })
    .onConflict('stripe_session_id')
    .ignore();
  return (await CreditPurchase.query(trx).findOne({ stripe_session_id: session.id }).forUpdate()) ?? null;
}

/**
 * The account a session credits: the workspace its metadata names, or (sessions from before workspaces) the user,
 * whose personal workspace has their id. Its client_reference_id is the same id either way.
 */
function sessionAccount(session: Stripe.Checkout.Session): string | undefined {
  return session.metadata?.workspaceId || session.metadata?.userId;
}

/** The user who started the session (the buyer): metadata `userId`, which named the account (= its owner) before workspaces. */
function sessionBuyer(session: Stripe.Checkout.Session): string | null {
  const buyer = session.metadata?.userId;
  return buyer && UUID_RE.test(buyer) ? buyer : null;
}

/**
 * A paid session of this app (its metadata names an account and a package, its client_reference_id the same
 * account) whose account no longer exists: the payment cannot be credited and must go back.
 */
async function sessionOfDeletedAccount(trx: Knex.Transaction, session: Stripe.Checkout.Session): Promise<{ userId: string; packageId: string } | null> {
  const userId = sessionAccount(session);
  const pkg = findCreditPackage(session.metadata?.packageId ?? '');
  if (!pkg || !userId || !UUID_RE.test(userId) || session.client_reference_id !== userId) return null;
  const profile = await trx('profiles').where({ id: userId }).first('id');
  return profile ? null : { userId, packageId: pkg.id };
}

/**
 * Whether the account is gone or going: a personal workspace whose user is marked for deletion (a share lock keeps
 * the mark from landing until this transaction ends), or a workspace that no longer exists (a share lock on a team
 * workspace's row keeps its deletion waiting for this transaction).
 */
async function accountBeingDeleted(trx: Knex.Transaction, accountId: string): Promise<boolean> {
  const workspace: { personal_user_id: string | null } | undefined = await trx('workspaces').where({ id: accountId }).forShare().first('personal_user_id');
  if (!workspace) return true;
  if (!workspace.personal_user_id) return false;
  const user: { deletion_requested_at: Date | null } | undefined = await trx('users')
    .where({ id: workspace.personal_user_id })
    .forShare()
    .first('deletion_requested_at');
  return !user || user.deletion_requested_at !== null;
}

/**
 * Records a payment nothing can be credited for and starts its full refund (payment-refund-<session id>), inside the
 * webhook's transaction: no money stays without a row saying what became of it. A second event of the session
 * finds the row and joins the same run.
 */
async function refundUncreditable(
  trx: Knex.Transaction,
  session: Stripe.Checkout.Session,
  eventId: string,
  owner: { userId: string; packageId: string },
  reason: UncreditableReason,
  startRefund: PaymentRefundStarter | undefined,
): Promise<WebhookOutcome> {
  const intent = paymentIntentId(session.payment_intent);
  if (!intent) return 'unknown_session';
  if (!startRefund) throw new Error(`payment ${session.id} cannot be credited (${reason}) and no refund starter is configured`);
  const input: PaymentRefundInput = {
    sessionId: session.id,
    paymentIntentId: intent,
    amountCents: session.amount_total ?? 0,
    currency: session.currency ?? PACKAGE_CURRENCY,
    userId: owner.userId,
    packageId: owner.packageId,
    reason,
    eventId,
  };
  const recorded = await recordUncreditablePayment(trx, input);
  try {
    await startRefund(input);
  } catch (err) {
    // the transaction rolls back (event and row): Stripe delivers the event again later
    throw new RefundStartError(err);
  }
  return recorded ? 'refund_scheduled' : 'refund_already_scheduled';
}

/** Credits the package exactly once: one 'purchase' ledger row keyed by the session id, the purchase completed. */
async function fulfilPurchase(trx: Knex.Transaction, session: Stripe.Checkout.Session, eventId: string, startRefund?: PaymentRefundStarter): Promise<WebhookOutcome> {
  const purchase = await lockPurchaseForSession(trx, session);
  if (!purchase) {
    const owner = await sessionOfDeletedAccount(trx, session);
    return owner ? refundUncreditable(trx, session, eventId, owner, 'account_deleted', startRefund) : 'unknown_session';
  }
  if (CREDITED.has(purchase.status)) return 'already_credited';
  if (await accountBeingDeleted(trx, purchase.workspaceId)) {
    return refundUncreditable(trx, session, eventId, { userId: purchase.workspaceId, packageId: purchase.packageId }, 'account_being_deleted', startRefund);
  }
  const pkg = findCreditPackage(purchase.packageId);
  if (!pkg) return 'unknown_session';
  const amountCents = session.amount_total ?? purchase.amountCents;
  const currency = session.currency ?? purchase.currency;
  const intent = paymentIntentId(session.payment_intent);
  const buyerId = typeof purchase.metadata?.buyerId === 'string' ? purchase.metadata.buyerId : sessionBuyer(session);
  await addCredits(trx, {
    workspaceId: purchase.workspaceId,
    // the buyer is the actor of the purchase row (a buyer whose account is gone since: a system row)
    actorId: buyerId,
    amount: purchase.credits,
    type: 'purchase',
    description: `${pkg.name} (${purchase.credits} credits)`,
    idempotencyKey: session.id,
    referenceId: purchase.id,
    metadata: {
      packageId: pkg.id,
      packageName: pkg.name,
      credits: purchase.credits,
      amountCents,
      currency,
      stripeSessionId: session.id,
      paymentIntentId: intent,
      stripeEventId: eventId,
    },
  });
  await CreditPurchase.query(trx)
    .patch({ status: 'completed', completedAt: trx.fn.now() as unknown as Date, paymentIntentId: intent, amountCents, currency })
    .where({ id: purchase.id });
  await recordWebhookEvent(trx, {
    workspaceId: purchase.workspaceId,
    type: 'purchase.completed',
    resourceId: purchase.id,
    data: {
      workspaceId: purchase.workspaceId,
      purchaseId: purchase.id,
      packageId: pkg.id,
      credits: purchase.credits,
      amount: amountCents,
      currency,
      purchasedBy: buyerId,
      href: webhookLinks.purchase(purchase.workspaceId, session.id),
    },
  });
  return 'credited';
}

async function notePaymentPending(trx: Knex.Transaction, session: Stripe.Checkout.Session): Promise<WebhookOutcome> {
  const purchase = await lockPurchaseForSession(trx, session);
  if (!purchase) return 'unknown_session';
  const intent = paymentIntentId(session.payment_intent);
  if (intent && !purchase.paymentIntentId) await CreditPurchase.query(trx).patch({ paymentIntentId: intent }).where({ id: purchase.id });
  return 'awaiting_payment';
}

async function closeOpenPurchase(trx: Knex.Transaction, session: Stripe.Checkout.Session, status: 'failed' | 'expired'): Promise<WebhookOutcome> {
  const purchase = await CreditPurchase.query(trx).findOne({ stripe_session_id: session.id }).forUpdate();
  if (!purchase) return 'unknown_session';
  // a late failure or expiry never undoes a credited purchase
  if (purchase.status === 'open') await CreditPurchase.query(trx).patch({ status }).where({ id: purchase.id });
  return status === 'failed' ? 'payment_failed' : 'expired';
}

/**
 * Takes back the refunded share of the purchased credits (all of them for a full refund), as far as the available
 * balance allows: a balance never goes below zero nor below what pending approvals hold. What could not be taken
 * is recorded as the shortfall, on the ledger row and in the purchase's refund log. The refunded share also comes
 * off total_credits_purchased (never below zero), so a buyer refunded in full is back to "rejection requires a
 * purchase". `amount_refunded` is cumulative, so an older or repeated refund event changes nothing.
 */
async function reverseRefundedCredits(trx: Knex.Transaction, charge: Stripe.Charge, eventId: string): Promise<WebhookOutcome> {
  const intent = paymentIntentId(charge.payment_intent);
  if (!intent) return 'unknown_payment';
  const purchase = await CreditPurchase.query(trx).findOne({ payment_intent_id: intent }).forUpdate();
  if (!purchase || !CREDITED.has(purchase.status)) return 'unknown_payment';
  const chargeAmount = charge.amount > 0 ? charge.amount : purchase.amountCents;
  const refundedCents = Math.min(charge.amount_refunded, chargeAmount);
  if (refundedCents <= purchase.refundedAmountCents) return 'refund_already_applied';

  const fullyRefunded = charge.refunded || refundedCents >= chargeAmount;
  const target = fullyRefunded ? purchase.credits : Math.floor((purchase.credits * refundedCents) / chargeAmount);
  const claimed = Math.max(0, target - purchase.creditsClaimedBack);
  let taken = 0;
  let purchasedAfter: number | null = null;
  if (claimed > 0) {
    // the ledger takes this lock again (same transaction); holding it first keeps the balance still between read and write
    const profile: { credits: number; reserved_credits: number; total_credits_purchased: number } | undefined = await trx('profiles')
      .where({ id: purchase.workspaceId })
      .forUpdate()
      .first('credits', 'reserved_credits', 'total_credits_purchased');
    taken = Math.min(claimed, Math.max(0, (profile?.credits ?? 0) - (profile?.reserved_credits ?? 0)));
    purchasedAfter = Math.max(0, (profile?.total_credits_purchased ?? 0) - claimed);
  }
  const shortfall = claimed - taken;
  const pkg = findCreditPackage(purchase.packageId);
  const record = {
    stripeEventId: eventId,
    chargeId: charge.id,
    refundedAmountCents: refundedCents,
    currency: charge.currency ?? purchase.currency,
    creditsClaimed: claimed,
    creditsTaken: taken,
    shortfall,
    purchasedCreditsRevoked: claimed,
    totalCreditsPurchasedAfter: purchasedAfter,
  };
  if (claimed > 0) {
    const what = `${pkg?.name ?? purchase.packageId}, ${fullyRefunded ? 'refunded in full' : `${refundedCents} of ${chargeAmount} cents refunded`}`;
    const took = shortfall > 0 ? `${taken} of ${countText(claimed, 'credit')} taken back (${shortfall} already spent or held)` : `${countText(taken, 'credit')} taken back`;
    await refundPurchasedCredits(trx, {
      workspaceId: purchase.workspaceId,
      // a refund is Stripe's event (issued from its dashboard), not an action of a member: a system row
      actorId: null,
      amount: taken,
      purchasedCredits: claimed,
      description: `Refund: ${what}; ${took}`,
      idempotencyKey: `stripe-refund:${purchase.stripeSessionId ?? purchase.id}:${target}`,
      referenceId: purchase.id,
      metadata: { reason: 'stripe_refund', packageId: purchase.packageId, stripeSessionId: purchase.stripeSessionId, paymentIntentId: intent, ...record },
    });
  }
  const refunds = Array.isArray(purchase.metadata?.refunds) ? (purchase.metadata.refunds as unknown[]) : [];
  await CreditPurchase.query(trx)
    .patch({
      status: fullyRefunded ? 'refunded' : 'partially_refunded',
      refundedAmountCents: refundedCents,
      creditsClaimedBack: purchase.creditsClaimedBack + claimed,
      creditsReversed: purchase.creditsReversed + taken,
      metadata: { ...purchase.metadata, refunds: [...refunds, { ...record, at: new Date().toISOString() }] },
    })
    .where({ id: purchase.id });
  return 'refunded';
}

// ---------------------------------------------------------------------------------------------------------------
// Reads (owner-scoped)

function toPurchaseView(row: CreditPurchase): PurchaseView {
  return {
    id: row.id,
    sessionId: row.stripeSessionId,
    packageId: row.packageId,
    packageName: findCreditPackage(row.packageId)?.name ?? row.packageId,
    credits: row.credits,
    amountCents: row.amountCents,
    currency: row.currency,
    status: row.status,
    createdAt: new Date(row.createdAt).toISOString(),
    completedAt: row.completedAt ? new Date(row.completedAt).toISOString() : null,
    creditsReversed: row.creditsReversed,
  };
}

const SESSION_READ_TIMEOUT_MS = 5_000;

/**
 * Where an open purchase's checkout stands by Stripe's session: open (awaiting payment), complete and unpaid
 * (a delayed method still processing), complete and paid (the webhook is on its way), or expired. A Stripe that
 * does not answer leaves it 'confirming': only our records or Stripe's own word make it fail.
 */
async function openCheckoutProgress(deps: BillingDeps, sessionId: string): Promise<CheckoutProgress> {
  const stripe = stripeClient(deps.config);
  if (!stripe) return { state: 'confirming', sessionStatus: null, paymentStatus: null };
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.retrieve(sessionId, {}, { timeout: SESSION_READ_TIMEOUT_MS, maxNetworkRetries: 0 });
  } catch (err) {
    deps.logger.warn({ err, sessionId }, 'stripe checkout session read failed; the purchase stays confirming');
    return { state: 'confirming', sessionStatus: null, paymentStatus: null };
  }
  const known = { sessionStatus: session.status ?? null, paymentStatus: session.payment_status ?? null };
  if (session.status === 'expired') return { state: 'expired', ...known };
  if (session.status === 'complete') return { state: session.payment_status === 'unpaid' ? 'processing' : 'confirming', ...known };
  return { state: 'awaiting_payment', ...known };
}

/** The purchase of a Checkout Session, where its checkout stands and the balance now; another user's session answers 404. */
export async function getPurchaseStatus(deps: BillingDeps, userId: string, sessionId: string): Promise<PurchaseStatusReply> {
  const row = await CreditPurchase.query(deps.knex).findOne({ stripe_session_id: sessionId, workspace_id: userId });
  if (!row) throw new PurchaseNotFoundError();
  let checkout: CheckoutProgress;
  if (CREDITED.has(row.status)) checkout = { state: 'credited', sessionStatus: 'complete', paymentStatus: 'paid' };
  else if (row.status === 'failed' || row.status === 'expired') checkout = { state: row.status, sessionStatus: null, paymentStatus: null };
  else checkout = await openCheckoutProgress(deps, sessionId);
  // read after Stripe answered: a webhook that landed meanwhile shows in the balance and the purchase
  const fresh = checkout.state === 'credited' ? row : ((await CreditPurchase.query(deps.knex).findById(row.id)) ?? row);
  if (fresh !== row && CREDITED.has(fresh.status)) checkout = { state: 'credited', sessionStatus: 'complete', paymentStatus: 'paid' };
  const summary = await getCreditSummary(deps.knex, userId);
  return { purchase: toPurchaseView(fresh), checkout, availableCredits: summary.availableCredits, credits: summary.credits };
}

export const PURCHASE_HISTORY_LIMIT = 50;

/** The user's purchases, newest first (sessions abandoned before paying included, as open or expired). */
export async function listPurchases(knex: Knex, userId: string): Promise<PurchaseView[]> {
  const rows = await CreditPurchase.query(knex)
    .where({ workspace_id: userId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(PURCHASE_HISTORY_LIMIT);
  return rows.map(toPurchaseView);
}
