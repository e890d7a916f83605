/**
 * The ledger's core: the locked, idempotent balance change every grant, charge and reservation goes through.
 */
import type { Knex } from 'knex';
import { UniqueViolationError } from 'objection';
import { CREDIT_COST, type ContentType } from '../../../domain/constants';
import { DomainError } from '../../../domain/errors';
import { CreditReservation } from '../../../db/models/CreditReservation';
import { CreditTransaction, type CreditTransactionType } from '../../../db/models/CreditTransaction';
import { publishEvent } from '../../platform/events';
import { afterCommit, countBalanceChange } from '../../platform/metrics';
import { recordCreditsLowIfCrossed } from '../../integrations/webhookEvents';
import { IdempotencyConflictError, InsufficientCreditsError, InvalidCreditAmountError, ProfileNotFoundError } from './errors';
import type { CreditActor, Db, LedgerEntry, ReservationResult } from './types';

// ---------------------------------------------------------------------------------------------------------------
// Internals

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SYSTEM_EMAIL = 'system';
export const LEDGER_KEY_CONSTRAINT = 'credit_transactions_idempotency_key_unique';
export const RESERVATION_KEY_CONSTRAINT = 'credit_reservations_idempotency_key_unique';

export interface LockedProfile {
  id: string;
  credits: number;
  reservedCredits: number;
}

export function isUniqueViolation(err: unknown, constraint: string): boolean {
  if (err instanceof UniqueViolationError) return err.constraint === constraint;
  const pgErr = err as { code?: unknown; constraint?: unknown } | null;
  return pgErr?.code === '23505' && pgErr.constraint === constraint;
}

export function assertKey(key: string): void {
  if (typeof key !== 'string' || key.trim() === '') throw new InvalidCreditAmountError('An idempotency key is required');
}

export function assertWholeCredits(amount: number, { allowZero, allowNegative }: { allowZero: boolean; allowNegative: boolean }): void {
  if (!Number.isSafeInteger(amount)) throw new InvalidCreditAmountError('Credit amounts are whole numbers');
  if (amount === 0 && !allowZero) throw new InvalidCreditAmountError('Credit amount must not be zero');
  if (amount < 0 && !allowNegative) throw new InvalidCreditAmountError('Credit amount must be positive');
}

export function assertContentType(contentType: string): asserts contentType is ContentType {
  if (!Object.prototype.hasOwnProperty.call(CREDIT_COST, contentType)) {
    throw new InvalidCreditAmountError(`Unknown content type "${contentType}"`);
  }
}

/** Locks the profile row for the rest of the transaction; every writer takes this lock first. */
export async function lockProfile(trx: Knex.Transaction, workspaceId: string): Promise<LockedProfile> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const row: { id: string; credits: number; reserved_credits: number } | undefined = await trx('profiles')
    .where({ id: workspaceId })
    .forUpdate()
    .first('id', 'credits', 'reserved_credits');
  if (!row) throw new ProfileNotFoundError();
  return { id: row.id, credits: row.credits, reservedCredits: row.reserved_credits };
}

export function toLedgerEntry(row: CreditTransaction, replayed: boolean): LedgerEntry {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
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

export function toReservationResult(row: CreditReservation, replayed: boolean): ReservationResult {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
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
export interface LedgerChangeFields {
  workspaceId: string;
  amount: number;
  description: string;
  idempotencyKey: string;
  referenceId?: string | null;
  metadata?: Record<string, unknown>;
  /** who made the change; 'system' when absent */
  createdBy?: CreditActor | null;
  /**
   * The acting user's id (DESIGN.md "Teams (workspaces)": the account is the workspace, each ledger row records who
   * acted). Resolved to `createdBy` (id and e-mail) under the lock when the user still exists; `createdBy` wins when
   * both are given. Absent or unknown: a system action ('system', created_by null).
   */
  actorId?: string | null;
}

/**
 * The acting user as the ledger records them: id and e-mail from `users`, or null (a system action) when no id is
 * given or the user no longer exists (created_by references users; a deleted account's rows read 'deleted account').
 */
export async function resolveActor(db: Db, actorId: string | null | undefined): Promise<CreditActor | null> {
  if (!actorId || !UUID_RE.test(actorId)) return null;
  const row: { id: string; email: string } | undefined = await db('users').where({ id: actorId }).first('id', 'email');
  return row ? { id: row.id, email: row.email } : null;
}

/** `amount` is signed here: what the balance changes by. */
export interface BalanceChange extends LedgerChangeFields {
  type: CreditTransactionType;
}

/** The earlier result for a repeated key, or a conflict when the key was used for another change. */
export async function replayLedgerKey(db: Db, change: BalanceChange): Promise<LedgerEntry | null> {
  const existing = await CreditTransaction.query(db).findOne({ idempotency_key: change.idempotencyKey });
  if (!existing) return null;
  if (existing.workspaceId !== change.workspaceId || existing.transactionType !== change.type || existing.amount !== change.amount) {
    throw new IdempotencyConflictError(change.idempotencyKey);
  }
  return toLedgerEntry(existing, true);
}

export async function insertLedgerRow(trx: Knex.Transaction, change: BalanceChange, balanceAfter: number): Promise<CreditTransaction> {
  return CreditTransaction.query(trx)
    .insert({
      workspaceId: change.workspaceId,
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
export async function changeBalance(
  db: Db,
  change: BalanceChange,
  refuse: (profile: LockedProfile, newCredits: number) => DomainError | null,
  totals: Record<string, number> = {},
): Promise<LedgerEntry> {
  assertKey(change.idempotencyKey);
  try {
    return await db.transaction(async (trx) => {
      const profile = await lockProfile(trx, change.workspaceId);
      const earlier = await replayLedgerKey(trx, change);
      if (earlier) return earlier;
      const newCredits = profile.credits + change.amount;
      const refusal = refuse(profile, newCredits);
      if (refusal) throw refusal;
      const createdBy = change.createdBy ?? (await resolveActor(trx, change.actorId));
      // running totals never go below zero (a refund lowers total_credits_purchased by at most what it holds)
      const increments = Object.fromEntries(Object.entries(totals).map(([column, by]) => [column, trx.raw('greatest(?? + ?, 0)', [column, by])]));
      await trx('profiles')
        .where({ id: profile.id })
        .update({ credits: newCredits, ...increments, updated_at: trx.fn.now() });
      await publishEvent(trx, profile.id, { kind: 'credits' });
      await recordCreditsLowIfCrossed(trx, { workspaceId: profile.id, before: profile.credits, after: newCredits, reserved: profile.reservedCredits });
      afterCommit(trx, () => countBalanceChange(change.type, change.amount));
      return toLedgerEntry(await insertLedgerRow(trx, { ...change, createdBy }, newCredits), false);
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

export function refuseNegativeAvailable(message?: string) {
  return (profile: LockedProfile, newCredits: number): DomainError | null =>
    newCredits < 0 || newCredits - profile.reservedCredits < 0 ? new InsufficientCreditsError(message) : null;
}
