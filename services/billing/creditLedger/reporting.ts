/**
 * Reads: the credit summary, usage limits, the transactions list and the ledger invariant check.
 */
import type { Knex } from 'knex';
import { TRANSACTIONS_PAGE_SIZE } from '../../../domain/constants';
import { usageLimits } from '../../../domain/creditMath';
import { CreditTransaction } from '../../../db/models/CreditTransaction';
import { InvalidCreditAmountError, ProfileNotFoundError } from './errors';
import type { CreditSummary, Db, LedgerInvariant, TransactionPage } from './types';
import { UUID_RE } from './ledger';

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
