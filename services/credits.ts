/**
 * The credit ledger (DESIGN.md "Credits"). Every balance change is one PostgreSQL transaction that locks the
 * profile row, writes, and carries an idempotency key: a repeated key returns the earlier result and writes nothing.
 * Lock order is always profile row first, then the reservation row, so concurrent changes never deadlock.
 *
 * Every change also publishes a 'credits' realtime event in its transaction (services/events.ts).
 *
 * Each function takes the database first: a Knex (a transaction is opened) or a Knex.Transaction (the work runs in
 * a savepoint inside it, so a refusal leaves the caller's transaction usable).
 */
import type { Knex } from 'knex';
import { UniqueViolationError } from 'objection';
import { CREDIT_COST, CREDIT_VALUE, REAL_MONEY_COST, REJECTION_COST, TRANSACTIONS_PAGE_SIZE, type ContentType } from '../domain/constants';
import { canCreate, usageLimits, type CanCreateContentResult } from '../domain/creditMath';
import { DomainError } from '../domain/errors';
import { ERROR_CODES, MSG } from '../domain/messages';
import { CreditReservation, type ReservationStatus } from '../db/models/CreditReservation';
import { CreditTransaction, type CreditTransactionType } from '../db/models/CreditTransaction';
import { publishEvent } from './events';
import { afterCommit, countBalanceChange, countCreditMovement } from './metrics';

export type Db = Knex | Knex.Transaction;

// ---------------------------------------------------------------------------------------------------------------
// Errors: expected refusals, each with a status for the API and a code for clients and workflows.

export class InsufficientCreditsError extends DomainError {
  constructor(message = 'Insufficient credits') {
    super(400, ERROR_CODES.insufficientCredits, message);
  }
}

export class ProfileNotFoundError extends DomainError {
  constructor() {
    super(404, 'PROFILE_NOT_FOUND', 'User not found');
  }
}

export class ReservationNotFoundError extends DomainError {
  constructor() {
    super(404, 'RESERVATION_NOT_FOUND', 'Credit reservation not found');
  }
}

/** Consuming a reservation that was already released (rejected or expired item). */
export class ReservationNotActiveError extends DomainError {
  constructor(
    readonly reservationId: string,
    readonly reservationStatus: ReservationStatus,
  ) {
    super(409, 'RESERVATION_NOT_ACTIVE', `Credit reservation ${reservationId} was ${reservationStatus} and cannot be consumed`);
  }
}

/** An idempotency key reused for a different change (other profile, type or amount). */
export class IdempotencyConflictError extends DomainError {
  constructor(key: string) {
    super(409, 'IDEMPOTENCY_CONFLICT', `Idempotency key "${key}" was already used for a different credit change`);
  }
}

export class InvalidCreditAmountError extends DomainError {
  constructor(message: string) {
    super(400, 'INVALID_AMOUNT', message);
  }
}

/** The pending-approval count reached the limit (the whole available credits, pending items' holds included, clamped to 1..5). */
export class PendingLimitReachedError extends DomainError {
  constructor(readonly limit: number) {
    super(409, ERROR_CODES.pendingLimitReached, MSG.pendingLimitReached(limit));
  }
}

/** A rejection streak started a cooldown: nothing new may start until it ends or an approval clears it. */
export class RejectionCooldownError extends DomainError {
  constructor(readonly until: Date | null) {
    super(429, ERROR_CODES.rejectionStreakCooldown, MSG.rejectionStreakCooldown);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Result shapes

export interface CreditActor {
  id: string;
  email: string;
}

export interface LedgerEntry {
  id: string;
  profileId: string;
  amount: number;
  balanceAfter: number;
  transactionType: CreditTransactionType;
  description: string;
  referenceId: string | null;
  metadata: Record<string, unknown>;
  idempotencyKey: string;
  createdBy: string | null;
  createdByEmail: string;
  createdAt: Date;
  /** true when the key had been used before and nothing was written this time */
  replayed: boolean;
}

export interface ReservationResult {
  id: string;
  profileId: string;
  contentType: ContentType;
  amount: number;
  status: ReservationStatus;
  idempotencyKey: string;
  createdAt: Date;
  settledAt: Date | null;
  /** true when this call changed nothing (repeated key, or the reservation was already settled) */
  replayed: boolean;
}

export interface ConsumeResult {
  reservation: ReservationResult;
  transaction: LedgerEntry;
}

export interface CreditSummary {
  credits: number;
  reservedCredits: number;
  availableCredits: number;
  totalClipsUsed: number;
  totalImagesUsed: number;
  totalAssembliesUsed: number;
  totalCreditsPurchased: number;
  totalCreditsAdded: number;
}

export interface TransactionListItem {
  id: string;
  amount: number;
  transactionType: CreditTransactionType;
  description: string;
  referenceId: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
  createdByEmail: string;
}

export interface TransactionPage {
  transactions: TransactionListItem[];
  page: number;
  pageSize: number;
  total: number;
}

export interface LedgerInvariant {
  balance: number;
  ledgerSum: number;
  reserved: number;
  activeReservationsSum: number;
  ok: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Internals

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SYSTEM_EMAIL = 'system';
const LEDGER_KEY_CONSTRAINT = 'credit_transactions_idempotency_key_unique';
const RESERVATION_KEY_CONSTRAINT = 'credit_reservations_idempotency_key_unique';

interface LockedProfile {
  id: string;
  credits: number;
  reservedCredits: number;
}

function isUniqueViolation(err: unknown, constraint: string): boolean {
  if (err instanceof UniqueViolationError) return err.constraint === constraint;
  const pgErr = err as { code?: unknown; constraint?: unknown } | null;
  return pgErr?.code === '23505' && pgErr.constraint === constraint;
}

function assertKey(key: string): void {
  if (typeof key !== 'string' || key.trim() === '') throw new InvalidCreditAmountError('An idempotency key is required');
}

function assertWholeCredits(amount: number, { allowZero, allowNegative }: { allowZero: boolean; allowNegative: boolean }): void {
  if (!Number.isSafeInteger(amount)) throw new InvalidCreditAmountError('Credit amounts are whole numbers');
  if (amount === 0 && !allowZero) throw new InvalidCreditAmountError('Credit amount must not be zero');
  if (amount < 0 && !allowNegative) throw new InvalidCreditAmountError('Credit amount must be positive');
}

function assertContentType(contentType: string): asserts contentType is ContentType {
  if (!Object.prototype.hasOwnProperty.call(CREDIT_COST, contentType)) {
    throw new InvalidCreditAmountError(`Unknown content type "${contentType}"`);
  }
}

/** Locks the profile row for the rest of the transaction; every writer takes this lock first. */
async function lockProfile(trx: Knex.Transaction, profileId: string): Promise<LockedProfile> {
  if (!UUID_RE.test(profileId)) throw new ProfileNotFoundError();
  const row: { id: string; credits: number; reserved_credits: number } | undefined = await trx('profiles')
    .where({ id: profileId })
    .forUpdate()
    .first('id', 'credits', 'reserved_credits');
  if (!row) throw new ProfileNotFoundError();
  return { id: row.id, credits: row.credits, reservedCredits: row.reserved_credits };
}

function toLedgerEntry(row: CreditTransaction, replayed: boolean): LedgerEntry {
  return {
    id: row.id,
    profileId: row.profileId,
    amount: row.amount,
    balanceAfter: row.balanceAfter,
    transactionType: row.transactionType,
    description: row.description,
    referenceId: row.referenceId,
    metadata: row.metadata ?? {},
    idempotencyKey: row.idempotencyKey,
    createdBy: row.createdBy,
    createdByEmail: row.createdByEmail,
    createdAt: row.createdAt,
    replayed,
  };
}

function toReservationResult(row: CreditReservation, replayed: boolean): ReservationResult {
  return {
    id: row.id,
    profileId: row.profileId,
    contentType: row.contentType,
    amount: row.amount,
    status: row.status,
    idempotencyKey: row.idempotencyKey,
    createdAt: row.createdAt,
    settledAt: row.settledAt,
    replayed,
  };
}

/** What a ledger row records besides its type: whose balance, by how much, why, under which key, by whom. */
interface LedgerChangeFields {
  profileId: string;
  amount: number;
  description: string;
  idempotencyKey: string;
  referenceId?: string | null;
  metadata?: Record<string, unknown>;
  /** who made the change; 'system' when absent */
  createdBy?: CreditActor | null;
}

/** `amount` is signed here: what the balance changes by. */
interface BalanceChange extends LedgerChangeFields {
  type: CreditTransactionType;
}

/** The earlier result for a repeated key, or a conflict when the key was used for another change. */
async function replayLedgerKey(db: Db, change: BalanceChange): Promise<LedgerEntry | null> {
  const existing = await CreditTransaction.query(db).findOne({ idempotency_key: change.idempotencyKey });
  if (!existing) return null;
  if (existing.profileId !== change.profileId || existing.transactionType !== change.type || existing.amount !== change.amount) {
    throw new IdempotencyConflictError(change.idempotencyKey);
  }
  return toLedgerEntry(existing, true);
}

async function insertLedgerRow(trx: Knex.Transaction, change: BalanceChange, balanceAfter: number): Promise<CreditTransaction> {
  return CreditTransaction.query(trx)
    .insert({
      profileId: change.profileId,
      amount: change.amount,
      balanceAfter,
      transactionType: change.type,
      description: change.description,
      referenceId: change.referenceId ?? null,
      metadata: change.metadata ?? {},
      idempotencyKey: change.idempotencyKey,
      createdBy: change.createdBy?.id ?? null,
      createdByEmail: change.createdBy?.email ?? SYSTEM_EMAIL,
      // time of the write (after the profile lock), so "newest first" follows the ledger's real order
      createdAt: trx.raw('clock_timestamp()') as unknown as Date,
    })
    .returning('*');
}

/**
 * The one path for add / deduct / admin adjust: lock, replay a repeated key, check, update the profile, append.
 * `refuse` returns an error when the new balance is not allowed.
 */
async function changeBalance(
  db: Db,
  change: BalanceChange,
  refuse: (profile: LockedProfile, newCredits: number) => DomainError | null,
  totals: Record<string, number> = {},
): Promise<LedgerEntry> {
  assertKey(change.idempotencyKey);
  try {
    return await db.transaction(async (trx) => {
      const profile = await lockProfile(trx, change.profileId);
      const earlier = await replayLedgerKey(trx, change);
      if (earlier) return earlier;
      const newCredits = profile.credits + change.amount;
      const refusal = refuse(profile, newCredits);
      if (refusal) throw refusal;
      const increments = Object.fromEntries(Object.entries(totals).map(([column, by]) => [column, trx.raw('?? + ?', [column, by])]));
      await trx('profiles')
        .where({ id: profile.id })
        .update({ credits: newCredits, ...increments, updated_at: trx.fn.now() });
      await publishEvent(trx, profile.id, { kind: 'credits' });
      afterCommit(trx, () => countBalanceChange(change.type, change.amount));
      return toLedgerEntry(await insertLedgerRow(trx, change, newCredits), false);
    });
  } catch (err) {
    // the same key written concurrently for another profile (the profile lock serialises only same-profile writers)
    if (isUniqueViolation(err, LEDGER_KEY_CONSTRAINT)) {
      const earlier = await replayLedgerKey(db, change);
      if (earlier) return earlier;
    }
    throw err;
  }
}

function refuseNegativeAvailable(message?: string) {
  return (profile: LockedProfile, newCredits: number): DomainError | null =>
    newCredits < 0 || newCredits - profile.reservedCredits < 0 ? new InsufficientCreditsError(message) : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Balance changes

/** `amount`: the credits to add, a positive number. */
export interface AddCreditsInput extends LedgerChangeFields {
  type: 'signup_bonus' | 'purchase' | 'add';
}

/** credits += amount; total_credits_added += amount; a purchase also counts in total_credits_purchased. */
export async function addCredits(db: Db, input: AddCreditsInput): Promise<LedgerEntry> {
  assertWholeCredits(input.amount, { allowZero: false, allowNegative: false });
  if (!['signup_bonus', 'purchase', 'add'].includes(input.type)) throw new InvalidCreditAmountError(`Unknown credit type "${input.type}"`);
  const totals: Record<string, number> = { total_credits_added: input.amount };
  if (input.type === 'purchase') totals.total_credits_purchased = input.amount;
  return changeBalance(db, { ...input, type: input.type }, () => null, totals);
}

/** `amount`: the credits to take, a positive number. */
export type DeductCreditsInput = LedgerChangeFields;

/** credits -= amount; refused when it would take available credits (credits - reserved) below zero. */
export async function deductCredits(db: Db, input: DeductCreditsInput): Promise<LedgerEntry> {
  assertWholeCredits(input.amount, { allowZero: false, allowNegative: false });
  return changeBalance(db, { ...input, amount: -input.amount, type: 'deduct' }, refuseNegativeAvailable());
}

/** Credits never go below zero: a removal may take at most the user's available credits (balance - reserved). */
function refuseAdjustBelowZero(amount: number) {
  return (profile: LockedProfile, newCredits: number): DomainError | null => {
    if (newCredits >= 0 && newCredits - profile.reservedCredits >= 0) return null;
    const available = profile.credits - profile.reservedCredits;
    const held = profile.reservedCredits > 0 ? ` (balance ${profile.credits}, ${profile.reservedCredits} reserved)` : '';
    return new InsufficientCreditsError(
      `Cannot remove ${Math.abs(amount)} credits: the user has ${available} available${held}. Credits never go below zero.`,
    );
  };
}

export interface AdminAdjustInput {
  profileId: string;
  /** signed change */
  amount: number;
  reason: string;
  idempotencyKey: string;
  admin: CreditActor;
}

/** A signed correction by an admin, recorded with the admin's id and e-mail; never leaves available credits negative. */
export async function adminAdjustCredits(db: Db, input: AdminAdjustInput): Promise<LedgerEntry> {
  assertWholeCredits(input.amount, { allowZero: false, allowNegative: true });
  return changeBalance(
    db,
    {
      profileId: input.profileId,
      amount: input.amount,
      type: 'admin_adjust',
      description: input.reason,
      idempotencyKey: input.idempotencyKey,
      metadata: { reason: input.reason },
      createdBy: input.admin,
    },
    refuseAdjustBelowZero(input.amount),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Reservations

export interface ReserveCreditsInput {
  profileId: string;
  contentType: ContentType;
  /** defaults to CREDIT_COST[contentType] */
  amount?: number;
  idempotencyKey: string;
  description?: string;
  metadata?: Record<string, unknown>;
}

/** Holds credits for one item: reserved_credits += amount, refused when available < amount. Idempotent on the key. */
export async function reserveCredits(db: Db, input: ReserveCreditsInput): Promise<ReservationResult> {
  assertKey(input.idempotencyKey);
  assertContentType(input.contentType);
  const amount = input.amount ?? CREDIT_COST[input.contentType];
  assertWholeCredits(amount, { allowZero: true, allowNegative: false });

  const replay = async (conn: Db): Promise<ReservationResult | null> => {
    const existing = await CreditReservation.query(conn).findOne({ idempotency_key: input.idempotencyKey });
    if (!existing) return null;
    if (existing.profileId !== input.profileId || existing.contentType !== input.contentType || existing.amount !== amount) {
      throw new IdempotencyConflictError(input.idempotencyKey);
    }
    return toReservationResult(existing, true);
  };

  try {
    return await db.transaction(async (trx) => {
      const profile = await lockProfile(trx, input.profileId);
      const earlier = await replay(trx);
      if (earlier) return earlier;
      if (profile.credits - profile.reservedCredits < amount) throw new InsufficientCreditsError();
      await trx('profiles')
        .where({ id: profile.id })
        .update({ reserved_credits: profile.reservedCredits + amount, updated_at: trx.fn.now() });
      await publishEvent(trx, profile.id, { kind: 'credits' });
      const row = await CreditReservation.query(trx)
        .insert({
          profileId: profile.id,
          contentType: input.contentType,
          amount,
          status: 'active',
          idempotencyKey: input.idempotencyKey,
          description: input.description ?? '',
          metadata: input.metadata ?? {},
        })
        .returning('*');
      afterCommit(trx, () => countCreditMovement('reserved', input.contentType, amount));
      return toReservationResult(row, false);
    });
  } catch (err) {
    if (isUniqueViolation(err, RESERVATION_KEY_CONSTRAINT)) {
      const earlier = await replay(db);
      if (earlier) return earlier;
    }
    throw err;
  }
}

/** Locks the reservation's profile, then the reservation itself (the order every writer uses). */
async function lockReservation(trx: Knex.Transaction, reservationId: string): Promise<{ profile: LockedProfile; reservation: CreditReservation }> {
  if (!UUID_RE.test(reservationId)) throw new ReservationNotFoundError();
  const found = await CreditReservation.query(trx).findById(reservationId).select('profile_id');
  if (!found) throw new ReservationNotFoundError();
  const profile = await lockProfile(trx, found.profileId);
  const reservation = await CreditReservation.query(trx).findById(reservationId).forUpdate();
  if (!reservation) throw new ReservationNotFoundError();
  return { profile, reservation };
}

export interface ReleaseReservationInput {
  reservationId: string;
  reason?: string;
}

/** active → released, reserved_credits -= amount. A settled reservation is returned unchanged (replayed: true). */
export async function releaseReservation(db: Db, input: ReleaseReservationInput): Promise<ReservationResult> {
  return db.transaction(async (trx) => {
    const { profile, reservation } = await lockReservation(trx, input.reservationId);
    if (reservation.status !== 'active') return toReservationResult(reservation, true);
    await trx('profiles')
      .where({ id: profile.id })
      .update({ reserved_credits: profile.reservedCredits - reservation.amount, updated_at: trx.fn.now() });
    await publishEvent(trx, profile.id, { kind: 'credits' });
    const metadata = input.reason ? { ...reservation.metadata, releaseReason: input.reason } : reservation.metadata;
    const updated = await CreditReservation.query(trx)
      .patchAndFetchById(reservation.id, { status: 'released', metadata, settledAt: trx.fn.now() as unknown as Date });
    afterCommit(trx, () => countCreditMovement('released', reservation.contentType, reservation.amount));
    return toReservationResult(updated, false);
  });
}

export interface ConsumeReservationInput {
  reservationId: string;
  description: string;
  metadata?: Record<string, unknown>;
}

const USED_COLUMN: Record<ContentType, string> = {
  image: 'total_images_used',
  clip: 'total_clips_used',
  assembly: 'total_assemblies_used',
};

export function consumeIdempotencyKey(reservationId: string): string {
  return `consume:${reservationId}`;
}

/**
 * Charges an approved item: active → consumed, credits and reserved_credits both -= amount, one 'consume' ledger row
 * (key consume:<reservationId>) carrying the business figures, and the content type's usage total + 1.
 * Consuming twice returns the first result; consuming a released reservation throws ReservationNotActiveError.
 */
export async function consumeReservation(db: Db, input: ConsumeReservationInput): Promise<ConsumeResult> {
  return db.transaction(async (trx) => {
    const { profile, reservation } = await lockReservation(trx, input.reservationId);
    const key = consumeIdempotencyKey(reservation.id);
    if (reservation.status === 'consumed') {
      const earlier = await CreditTransaction.query(trx).findOne({ idempotency_key: key });
      if (!earlier) throw new Error(`consumed reservation ${reservation.id} has no ledger row`);
      return { reservation: toReservationResult(reservation, true), transaction: toLedgerEntry(earlier, true) };
    }
    if (reservation.status !== 'active') throw new ReservationNotActiveError(reservation.id, reservation.status);

    const newCredits = profile.credits - reservation.amount;
    const usedColumn = USED_COLUMN[reservation.contentType];
    await trx('profiles')
      .where({ id: profile.id })
      .update({
        credits: newCredits,
        reserved_credits: profile.reservedCredits - reservation.amount,
        [usedColumn]: trx.raw('?? + 1', [usedColumn]),
        updated_at: trx.fn.now(),
      });
    await publishEvent(trx, profile.id, { kind: 'credits' });
    const updated = await CreditReservation.query(trx)
      .patchAndFetchById(reservation.id, { status: 'consumed', settledAt: trx.fn.now() as unknown as Date });
    const entry = await insertLedgerRow(
      trx,
      {
        profileId: profile.id,
        amount: -reservation.amount,
        type: 'consume',
        description: input.description,
        idempotencyKey: key,
        referenceId: reservation.id,
        metadata: {
          ...(input.metadata ?? {}),
          reservationId: reservation.id,
          contentType: reservation.contentType,
          creditCost: reservation.amount,
          // business figures for reporting; they never change a balance
          rejectionCost: REJECTION_COST[reservation.contentType],
          realMoneyCost: REAL_MONEY_COST[reservation.contentType],
          creditValue: CREDIT_VALUE,
        },
      },
      newCredits,
    );
    afterCommit(trx, () => countCreditMovement('consumed', reservation.contentType, reservation.amount));
    return { reservation: toReservationResult(updated, false), transaction: toLedgerEntry(entry, false) };
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Reads

/** The summary query alone, so the benchmark can run exactly this SQL straight on pg. */
export function creditSummaryQuery(db: Db, profileId: string): Knex.QueryBuilder {
  return db('profiles')
    .where({ id: profileId })
    .first(
      'credits',
      'reserved_credits',
      'total_clips_used',
      'total_images_used',
      'total_assemblies_used',
      'total_credits_purchased',
      'total_credits_added',
    );
}

export interface CreditSummaryRow {
  credits: number;
  reserved_credits: number;
  total_clips_used: number;
  total_images_used: number;
  total_assemblies_used: number;
  total_credits_purchased: number;
  total_credits_added: number;
}

export function toCreditSummary(row: CreditSummaryRow): CreditSummary {
  return {
    credits: row.credits,
    reservedCredits: row.reserved_credits,
    availableCredits: row.credits - row.reserved_credits,
    totalClipsUsed: row.total_clips_used,
    totalImagesUsed: row.total_images_used,
    totalAssembliesUsed: row.total_assemblies_used,
    totalCreditsPurchased: row.total_credits_purchased,
    totalCreditsAdded: row.total_credits_added,
  };
}

export async function getCreditSummary(db: Db, profileId: string): Promise<CreditSummary> {
  if (!UUID_RE.test(profileId)) throw new ProfileNotFoundError();
  const row: CreditSummaryRow | undefined = await creditSummaryQuery(db, profileId);
  if (!row) throw new ProfileNotFoundError();
  return toCreditSummary(row);
}

/** clips = floor(credits / 4), images = credits. */
export async function getUsageLimits(db: Db, profileId: string): Promise<{ clips: number; images: number }> {
  if (!UUID_RE.test(profileId)) throw new ProfileNotFoundError();
  const row: { credits: number } | undefined = await db('profiles').where({ id: profileId }).first('credits');
  if (!row) throw new ProfileNotFoundError();
  return usageLimits(row.credits);
}

/**
 * What counts as pending for the start rule: items waiting in the approval queue and not past their deadline
 * (an expired item's reservation is released by its workflow), plus generations in flight (an active reservation
 * no pending approval holds yet). Counting the in-flight ones is what keeps two simultaneous starts from both
 * passing the pending-limit check. The approval stats read the same columns (`getPendingUsage`).
 */
function pendingUsageColumns(db: Db): Knex.Raw[] {
  const inFlight =
    "from credit_reservations r where r.profile_id = p.id and r.status = 'active' and not exists (select 1 from pending_approvals a where a.reservation_id = r.id)";
  const queued = "from pending_approvals a where a.user_id = p.id and a.status = 'pending' and a.approval_deadline > now()";
  return [
    db.raw(`(select count(*) ${queued}) + (select count(*) ${inFlight}) as pending_count`),
    db.raw(`(select coalesce(sum(a.remaining_cost), 0) ${queued}) + (select coalesce(sum(r.amount), 0) ${inFlight}) as pending_cost`),
  ];
}

interface StartRuleRow {
  credits: number;
  reserved_credits: number;
  rejection_cooldown_until: Date | null;
  pending_count: string;
  pending_cost: string;
}

function applyStartRule(row: StartRuleRow, contentType: ContentType, now: Date): CanCreateContentResult {
  const pendingCount = Number(row.pending_count);
  const pendingCost = Number(row.pending_cost);
  const result = canCreate({
    contentType,
    credits: row.credits,
    reservedCredits: row.reserved_credits,
    pendingCount,
    pendingCost,
    cooldownUntil: row.rejection_cooldown_until,
    now,
  });
  return { ...result, pendingCost };
}

async function readStartRuleRow(db: Db, profileId: string): Promise<StartRuleRow> {
  if (!UUID_RE.test(profileId)) throw new ProfileNotFoundError();
  const row: StartRuleRow | undefined = await db('profiles as p')
    .where('p.id', profileId)
    .first('p.credits', 'p.reserved_credits', 'p.rejection_cooldown_until', ...pendingUsageColumns(db));
  if (!row) throw new ProfileNotFoundError();
  return row;
}

/** The start rule of DESIGN.md for one more item of `contentType`, from the profile and its pending approvals. */
export async function canCreateContent(db: Db, profileId: string, contentType: ContentType, now: Date = new Date()): Promise<CanCreateContentResult> {
  assertContentType(contentType);
  return applyStartRule(await readStartRuleRow(db, profileId), contentType, now);
}

export interface PendingUsage {
  pendingCount: number;
  pendingCost: number;
  limit: number;
}

/** The pending count, its cost and the limit exactly as the start rule counts them (the approval stats). */
export async function getPendingUsage(db: Db, profileId: string): Promise<PendingUsage> {
  const { pendingCount, pendingCost, limit } = applyStartRule(await readStartRuleRow(db, profileId), 'image', new Date());
  return { pendingCount, pendingCost, limit };
}

/** The refusal a failed start rule answers with. */
function startRefusal(check: CanCreateContentResult, cooldownUntil: Date | null): DomainError {
  switch (check.reason) {
    case 'cooldown':
      return new RejectionCooldownError(cooldownUntil);
    case 'pending_limit':
      return new PendingLimitReachedError(check.limit);
    default:
      return new InsufficientCreditsError();
  }
}

export interface CheckAndReserveInput extends ReserveCreditsInput {
  /** the clock the cooldown is compared with (tests) */
  now?: Date;
}

/**
 * Starts one generated item: applies the start rule and reserves its cost under the same profile row lock, so
 * concurrent starts are judged one after another, each seeing the others' reservations. Idempotent on the key:
 * a repeated key returns the earlier reservation without judging again (its item may be pending by now).
 * Refusals: InsufficientCreditsError (also when pending items hold the credits needed), PendingLimitReachedError,
 * RejectionCooldownError.
 */
export async function checkAndReserve(db: Db, input: CheckAndReserveInput): Promise<ReservationResult> {
  assertKey(input.idempotencyKey);
  assertContentType(input.contentType);
  if (!UUID_RE.test(input.profileId)) throw new ProfileNotFoundError();
  const now = input.now ?? new Date();
  return db.transaction(async (trx) => {
    await lockProfile(trx, input.profileId);
    const earlier = await CreditReservation.query(trx).findOne({ idempotency_key: input.idempotencyKey });
    if (!earlier) {
      const row = await readStartRuleRow(trx, input.profileId);
      const check = applyStartRule(row, input.contentType, now);
      if (!check.canCreate) throw startRefusal(check, row.rejection_cooldown_until);
    }
    // inside the lock: a repeated key replays (or conflicts) exactly as reserveCredits does
    return reserveCredits(trx, input);
  });
}

/** 50 a page, newest first, with the creator's e-mail. */
export async function listTransactions(db: Db, profileId: string, page = 1): Promise<TransactionPage> {
  if (!Number.isSafeInteger(page) || page < 1) throw new InvalidCreditAmountError('page must be a whole number from 1');
  if (!UUID_RE.test(profileId)) throw new ProfileNotFoundError();
  const pageSize = TRANSACTIONS_PAGE_SIZE;
  const rows = await CreditTransaction.query(db)
    .where({ profile_id: profileId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(pageSize)
    .offset((page - 1) * pageSize);
  const countRow = (await db('credit_transactions').where({ profile_id: profileId }).count({ n: '*' }).first()) as { n: string | number } | undefined;
  return {
    transactions: rows.map((r) => ({
      id: r.id,
      amount: r.amount,
      transactionType: r.transactionType,
      description: r.description,
      referenceId: r.referenceId,
      metadata: r.metadata ?? {},
      createdAt: r.createdAt,
      createdByEmail: r.createdByEmail,
    })),
    page,
    pageSize,
    total: Number(countRow?.n ?? 0),
  };
}

/**
 * balance = sum of the ledger; reserved = sum of active reservations; neither negative and reserved <= balance.
 * Reads under a share lock on the profile row, so no writer moves between the reads.
 */
export async function checkLedgerInvariant(db: Db, profileId: string): Promise<LedgerInvariant> {
  if (!UUID_RE.test(profileId)) throw new ProfileNotFoundError();
  return db.transaction(async (trx) => {
    const profile: { credits: number; reserved_credits: number } | undefined = await trx('profiles')
      .where({ id: profileId })
      .forShare()
      .first('credits', 'reserved_credits');
    if (!profile) throw new ProfileNotFoundError();
    const ledger = (await trx('credit_transactions').where({ profile_id: profileId }).sum({ s: 'amount' }).first()) as { s: string | null } | undefined;
    const active = (await trx('credit_reservations').where({ profile_id: profileId, status: 'active' }).sum({ s: 'amount' }).first()) as
      | { s: string | null }
      | undefined;
    const ledgerSum = Number(ledger?.s ?? 0);
    const activeReservationsSum = Number(active?.s ?? 0);
    const balance = profile.credits;
    const reserved = profile.reserved_credits;
    const ok = balance === ledgerSum && reserved === activeReservationsSum && balance >= 0 && reserved >= 0 && reserved <= balance;
    return { balance, ledgerSum, reserved, activeReservationsSum, ok };
  });
}
