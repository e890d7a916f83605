/**
 * The credit ledger's shared shapes: the database handle and the results callers receive.
 */
import type { Knex } from 'knex';
import { type ContentType } from '../../../domain/constants';
import { type ReservationStatus } from '../../../db/models/CreditReservation';
import { type CreditTransactionType } from '../../../db/models/CreditTransaction';

export type Db = Knex | Knex.Transaction;

// ---------------------------------------------------------------------------------------------------------------
// Result shapes

export interface CreditActor {
  id: string;
  email: string;
}

export interface LedgerEntry {
  id: string;
  workspaceId: string;
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
  workspaceId: string;
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

export type { CreditSummary } from '../../../domain/creditMath';

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
  /** The next page's cursor (opaque), null on the last page. */
  nextCursor: string | null;
}

export interface LedgerInvariant {
  balance: number;
  ledgerSum: number;
  reserved: number;
  activeReservationsSum: number;
  ok: boolean;
}
