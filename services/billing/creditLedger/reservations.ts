/**
 * Reservations: hold the full cost at generation, consume it on approval, release it on reject or expiry.
 */
import type { Knex } from 'knex';
import { CREDIT_COST, CREDIT_VALUE, REAL_MONEY_COST, REJECTION_COST, type ContentType } from '../../../domain/constants';
import { CreditReservation } from '../../../db/models/CreditReservation';
import { CreditTransaction } from '../../../db/models/CreditTransaction';
import { publishEvent } from '../../platform/events';
import { afterCommit, countCreditMovement } from '../../platform/metrics';
import { recordCreditsLowIfCrossed } from '../../integrations/webhookEvents';
import { IdempotencyConflictError, InsufficientCreditsError, ReservationNotActiveError, ReservationNotFoundError } from './errors';
import type { ConsumeResult, Db, ReservationResult } from './types';
import { type LockedProfile, RESERVATION_KEY_CONSTRAINT, UUID_RE, assertContentType, assertKey, assertWholeCredits, insertLedgerRow, isUniqueViolation, lockProfile, resolveActor, toLedgerEntry, toReservationResult } from './ledger';

// ---------------------------------------------------------------------------------------------------------------
// Reservations

export interface ReserveCreditsInput {
  workspaceId: string;
  contentType: ContentType;
  /** defaults to CREDIT_COST[contentType] */
  amount?: number;
  idempotencyKey: string;
  description?: string;
  metadata?: Record<string, unknown>;
  /**
   * The user who started the item (the account is the workspace; this is who acted in it). A reservation writes no
   * ledger row: the id is kept in the reservation's metadata (`actorId`), where the consume falls back to it when
   * the approval names no approver (histories from before approvers were recorded).
   */
  actorId?: string | null;
}

/** The reservation an earlier call made under this key, or null; a different profile, type or amount is a conflict. */
async function replayReservation(conn: Db, input: ReserveCreditsInput, amount: number): Promise<ReservationResult | null> {
  const existing = await CreditReservation.query(conn).findOne({ idempotency_key: input.idempotencyKey });
  if (!existing) return null;
  if (existing.workspaceId !== input.workspaceId || existing.contentType !== input.contentType || existing.amount !== amount) {
    throw new IdempotencyConflictError(input.idempotencyKey);
  }
  return toReservationResult(existing, true);
}

/** The writes of a reservation, under the profile lock the caller holds: reserved_credits += amount, the row, the event. */
async function insertReservation(trx: Knex.Transaction, profile: LockedProfile, input: ReserveCreditsInput, amount: number): Promise<ReservationResult> {
  if (profile.credits - profile.reservedCredits < amount) throw new InsufficientCreditsError();
  await trx('profiles')
    .where({ id: profile.id })
    .update({ reserved_credits: profile.reservedCredits + amount, updated_at: trx.fn.now() });
  await publishEvent(trx, profile.id, { kind: 'credits' });
  const row = await CreditReservation.query(trx)
    .insert({
      workspaceId: profile.id,
      contentType: input.contentType,
      amount,
      status: 'active',
      idempotencyKey: input.idempotencyKey,
      description: input.description ?? '',
      metadata: input.actorId ? { ...(input.metadata ?? {}), actorId: input.actorId } : (input.metadata ?? {}),
    })
    .returning('*');
  afterCommit(trx, () => countCreditMovement('reserved', input.contentType, amount));
  return toReservationResult(row, false);
}

/** The checks every reservation makes first; the amount it holds. */
function reservationAmount(input: ReserveCreditsInput): number {
  assertKey(input.idempotencyKey);
  assertContentType(input.contentType);
  const amount = input.amount ?? CREDIT_COST[input.contentType];
  assertWholeCredits(amount, { allowZero: true, allowNegative: false });
  return amount;
}

/**
 * A reservation made in its own transaction: `judge` runs under the profile lock when the key is new (an earlier
 * reservation under the key is returned instead), and may refuse before the writes. Two first calls with one key
 * racing: the loser's insert violates the key's unique constraint, and it returns the winner's reservation.
 */
export async function reserveUnderLock(
  db: Db,
  input: ReserveCreditsInput,
  judge: (trx: Knex.Transaction, profile: LockedProfile) => Promise<void>,
): Promise<ReservationResult> {
  const amount = reservationAmount(input);
  try {
    return await db.transaction(async (trx) => {
      const profile = await lockProfile(trx, input.workspaceId);
      const earlier = await replayReservation(trx, input, amount);
      if (earlier) return earlier;
      await judge(trx, profile);
      return insertReservation(trx, profile, input, amount);
    });
  } catch (err) {
    if (isUniqueViolation(err, RESERVATION_KEY_CONSTRAINT)) {
      const earlier = await replayReservation(db, input, amount);
      if (earlier) return earlier;
    }
    throw err;
  }
}

/** Holds credits for one item: reserved_credits += amount, refused when available < amount. Idempotent on the key. */
export async function reserveCredits(db: Db, input: ReserveCreditsInput): Promise<ReservationResult> {
  return reserveUnderLock(db, input, async () => undefined);
}

/** Locks the reservation's profile, then the reservation itself (the order every writer uses). */
async function lockReservation(trx: Knex.Transaction, reservationId: string): Promise<{ profile: LockedProfile; reservation: CreditReservation }> {
  if (!UUID_RE.test(reservationId)) throw new ReservationNotFoundError();
  const found = await CreditReservation.query(trx).findById(reservationId).select('workspace_id');
  if (!found) throw new ReservationNotFoundError();
  const profile = await lockProfile(trx, found.workspaceId);
  const reservation = await CreditReservation.query(trx).findById(reservationId).forUpdate();
  if (!reservation) throw new ReservationNotFoundError();
  return { profile, reservation };
}

export interface ReleaseReservationInput {
  reservationId: string;
  reason?: string;
  /**
   * Who released it: the rejecting user, the job's starter for a failed or cancelled generation, the member whose
   * removal or deletion cancelled it; absent (null) for a system action with nobody behind it (expiry). A release
   * writes no ledger row (the balance does not move): the id is kept in the reservation's metadata (`releasedBy`).
   */
  actorId?: string | null;
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
    const metadata = {
      ...reservation.metadata,
      ...(input.reason ? { releaseReason: input.reason } : {}),
      ...(input.actorId ? { releasedBy: input.actorId } : {}),
    };
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
  /**
   * The approving user, recorded as the consume row's created_by / created_by_email. Absent: the reservation's
   * starter (its metadata's `actorId`), else a system row; a user who no longer exists is recorded as null.
   */
  actorId?: string | null;
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
    await recordCreditsLowIfCrossed(trx, { workspaceId: profile.id, before: profile.credits, after: newCredits, reserved: profile.reservedCredits - reservation.amount });
    const updated = await CreditReservation.query(trx)
      .patchAndFetchById(reservation.id, { status: 'consumed', settledAt: trx.fn.now() as unknown as Date });
    const starter = typeof reservation.metadata?.actorId === 'string' ? reservation.metadata.actorId : null;
    const createdBy = await resolveActor(trx, input.actorId ?? starter);
    const entry = await insertLedgerRow(
      trx,
      {
        workspaceId: profile.id,
        amount: -reservation.amount,
        type: 'consume',
        description: input.description,
        idempotencyKey: key,
        referenceId: reservation.id,
        createdBy,
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
