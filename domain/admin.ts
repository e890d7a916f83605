/**
 * The admin API's answers (api/routes/admin.ts), shared by the API and the front end's Admin view, and the
 * limits both sides check.
 */
import type { CreditSummary } from './creditMath';
export type AdminUserRole = 'user' | 'admin';

export const ADMIN_SEARCH_DEFAULT_LIMIT = 20;
export const ADMIN_SEARCH_MAX_LIMIT = 50;
/** Purchases shown on a user's admin page, newest first. */
export const ADMIN_PURCHASES_LIMIT = 20;
/** The largest single adjustment, up or down. */
export const ADMIN_ADJUST_MAX = 1_000_000;
export const ADMIN_REASON_MAX_LENGTH = 500;

/** One row of GET /api/admin/users?email= */
export interface AdminUserListItem {
  id: string;
  email: string;
  name: string;
  role: AdminUserRole;
  credits: number;
  reservedCredits: number;
  availableCredits: number;
  createdAt: string;
}

export interface AdminUserSearch {
  users: AdminUserListItem[];
  /** true when more users match than were returned: type more of the address */
  hasMore: boolean;
}

export type AdminCreditSummary = CreditSummary;

export interface AdminPurchase {
  id: string;
  packageId: string;
  credits: number;
  amountCents: number;
  currency: string;
  status: string;
  createdAt: string;
  completedAt: string | null;
}

export interface AdminTransaction {
  id: string;
  /** signed change to the balance */
  amount: number;
  transactionType: string;
  description: string;
  referenceId: string | null;
  createdAt: string;
  /** who made the change: an admin's e-mail, or 'system' */
  createdByEmail: string;
}

/** GET /api/admin/users/:id */
export interface AdminUserDetail {
  user: { id: string; email: string; name: string; role: AdminUserRole; createdAt: string };
  credits: AdminCreditSummary;
  purchases: AdminPurchase[];
  /** the newest ledger rows (one page) */
  transactions: AdminTransaction[];
  transactionsTotal: number;
  /** validate_credit_balance: balance = sum of the ledger, reserved = sum of active reservations */
  ledger: { ok: boolean; ledgerSum: number; activeReservationsSum: number };
}

/** POST /api/admin/credits/adjust */
export interface AdminAdjustInput {
  userId: string;
  /** signed, non-zero whole credits */
  amount: number;
  reason: string;
  /** the same key on a retry applies the adjustment once */
  idempotencyKey?: string;
}

export interface AdminAdjustResult {
  id: string;
  userId: string;
  amount: number;
  balanceAfter: number;
  transactionType: string;
  description: string;
  createdByEmail: string;
  createdAt: string;
  /** true when the key had been used before and nothing changed this time */
  replayed: boolean;
  /** the user's credits after the change */
  credits: AdminCreditSummary;
}
