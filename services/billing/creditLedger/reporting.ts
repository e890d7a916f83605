/**
 * Reads: the credit summary, usage limits, the transactions list and the ledger invariant check.
 */
import type { Knex } from 'knex';
import { TRANSACTIONS_PAGE_SIZE } from '../../../domain/constants';
import { usageLimits } from '../../../domain/creditMath';
import { CreditTransaction } from '../../../db/models/CreditTransaction';
import { DomainError } from '../../../domain/errors';
import { InvalidCreditAmountError, ProfileNotFoundError } from './errors';
import type { CreditSummary, Db, LedgerInvariant, TransactionPage } from './types';
import { UUID_RE } from './ledger';

// ---------------------------------------------------------------------------------------------------------------
// Reads

/** The summary query alone, so the benchmark can run exactly this SQL straight on pg. */
export function creditSummaryQuery(db: Db, workspaceId: string): Knex.QueryBuilder {
  return db('profiles')
    .where({ id: workspaceId })
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

export async function getCreditSummary(db: Db, workspaceId: string): Promise<CreditSummary> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const row: CreditSummaryRow | undefined = await creditSummaryQuery(db, workspaceId);
  if (!row) throw new ProfileNotFoundError();
  return toCreditSummary(row);
}

/** clips = floor(credits / 4), images = credits. */
export async function getUsageLimits(db: Db, workspaceId: string): Promise<{ clips: number; images: number }> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const row: { credits: number } | undefined = await db('profiles').where({ id: workspaceId }).first('credits');
  if (!row) throw new ProfileNotFoundError();
  return usageLimits(row.credits);
}

/**
 * Where the next page starts: after the ledger row `after` (newest first by creation time, then id), as page `page` of
 * `total`. The total is the one counted for the first page: rows are only ever appended, and a row written later is
 * newer than every row the pages walk, so the count of what they walk never changes.
 */
export interface TransactionCursor {
  after: string;
  page: number;
  total: number;
}

/** The opaque cursor handed to the client (exported for the growth benchmark, which starts deep in a ledger). */
export function encodeTransactionCursor(cursor: TransactionCursor): string {
  return Buffer.from(JSON.stringify([cursor.after, cursor.page, cursor.total])).toString('base64url');
}

/** The cursor's content, or null for anything listTransactions did not hand out. */
export function decodeTransactionCursor(text: string): TransactionCursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [after, page, total] = value as unknown[];
  if (typeof after !== 'string' || !UUID_RE.test(after)) return null;
  if (!Number.isSafeInteger(page) || (page as number) < 2 || !Number.isSafeInteger(total) || (total as number) < 0) return null;
  return { after: after.toLowerCase(), page: page as number, total: total as number };
}

export class InvalidTransactionCursorError extends DomainError {
  constructor() {
    super(400, 'VALIDATION_ERROR', 'cursor is not one this list handed out');
  }
}

/**
 * 50 a page, newest first, with the creator's e-mail. `page` (a number) reads by OFFSET and counts the account's rows
 * for `total`: what the first page does, and what a client asking for page N directly gets. `nextCursor` continues
 * from a page by keyset: the 50 rows after its last row on the (workspace_id, created_at) index, with no offset and no
 * count, so any page costs what the first does however long the ledger (docs/growth.md).
 */
export async function listTransactions(db: Db, workspaceId: string, at: number | { cursor: string } = 1): Promise<TransactionPage> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const pageSize = TRANSACTIONS_PAGE_SIZE;
  const query = CreditTransaction.query(db)
    .where({ workspace_id: workspaceId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(pageSize + 1);
  let page: number;
  let total: number;
  if (typeof at === 'number') {
    if (!Number.isSafeInteger(at) || at < 1) throw new InvalidCreditAmountError('page must be a whole number from 1');
    page = at;
    query.offset((page - 1) * pageSize);
    const countRow = (await db('credit_transactions').where({ workspace_id: workspaceId }).count({ n: '*' }).first()) as { n: string | number } | undefined;
    total = Number(countRow?.n ?? 0);
  } else {
    const cursor = decodeTransactionCursor(at.cursor);
    if (!cursor) throw new InvalidTransactionCursorError();
    // the row's time as PostgreSQL's text, to the microsecond (a JavaScript Date would cut it to the millisecond)
    const after = (await db('credit_transactions').where({ id: cursor.after, workspace_id: workspaceId }).first(db.raw('created_at::text as at'))) as { at: string } | undefined;
    if (!after) throw new InvalidTransactionCursorError();
    query.whereRaw('created_at <= ?::timestamptz and (created_at, id) < (?::timestamptz, ?::uuid)', [after.at, after.at, cursor.after]);
    ({ page, total } = cursor);
  }
  const rows = await query;
  const shown = rows.slice(0, pageSize);
  const last = shown[shown.length - 1];
  return {
    transactions: shown.map((r) => ({
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
    total,
    nextCursor: rows.length > pageSize && last ? encodeTransactionCursor({ after: last.id, page: page + 1, total }) : null,
  };
}

/**
 * balance = sum of the ledger; reserved = sum of active reservations; neither negative and reserved <= balance.
 * Reads under a share lock on the profile row, so no writer moves between the reads.
 */
export async function checkLedgerInvariant(db: Db, workspaceId: string): Promise<LedgerInvariant> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  return db.transaction(async (trx) => {
    const profile: { credits: number; reserved_credits: number } | undefined = await trx('profiles')
      .where({ id: workspaceId })
      .forShare()
      .first('credits', 'reserved_credits');
    if (!profile) throw new ProfileNotFoundError();
    const ledger = (await trx('credit_transactions').where({ workspace_id: workspaceId }).sum({ s: 'amount' }).first()) as { s: string | null } | undefined;
    const active = (await trx('credit_reservations').where({ workspace_id: workspaceId, status: 'active' }).sum({ s: 'amount' }).first()) as
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
