/**
 * The admin API's answers (api/routes/admin.ts), shared by the API and the front end's Admin view, and the
 * limits both sides check.
 */
import type { CreditSummary } from './creditMath';
import type { WorkspaceRole } from './workspaceRoles';
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

/** A workspace as the site admin sees it: its balance (the workspace's, shared by its members) and size. */
export interface AdminWorkspaceSummary {
  id: string;
  name: string;
  /** a user's personal workspace (its id is the user's) */
  personal: boolean;
  memberCount: number;
  credits: number;
  reservedCredits: number;
  availableCredits: number;
}

/** One of a user's workspaces in their admin detail: with the user's role in it. */
export interface AdminUserWorkspace extends AdminWorkspaceSummary {
  role: WorkspaceRole;
}

/** One row of GET /api/admin/workspaces?name= : with its owners, to tell same-named workspaces apart. */
export interface AdminWorkspaceMatch extends AdminWorkspaceSummary {
  owners: Array<{ id: string; email: string }>;
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
  /** every workspace the user is a member of, personal first, then by name (credits above are the personal one's) */
  workspaces: AdminUserWorkspace[];
}

/**
 * Which workspace an adjustment changes (DESIGN.md "Teams (workspaces)": credits belong to the workspace). Exactly
 * one way of naming it: `workspaceId`; `userId` (that user's personal workspace); or `email` and/or `workspace` (a
 * name): an e-mail alone is that user's personal workspace, with a name the workspace of that name they belong to;
 * a name alone must name exactly one workspace (an ambiguous name is refused with the matches).
 */
export interface AdminAdjustTarget {
  workspaceId?: string;
  userId?: string;
  email?: string;
  workspace?: string;
}

/** POST /api/admin/credits/adjust */
export interface AdminAdjustInput extends AdminAdjustTarget {
  /** signed, non-zero whole credits */
  amount: number;
  reason: string;
  /** the same key on a retry applies the adjustment once */
  idempotencyKey?: string;
}

export interface AdminAdjustResult {
  id: string;
  /** the account (= workspace) whose balance changed; for a personal workspace, its user's id */
  userId: string;
  workspace: { id: string; name: string; personal: boolean };
  amount: number;
  balanceAfter: number;
  transactionType: string;
  description: string;
  createdByEmail: string;
  createdAt: string;
  /** true when the key had been used before and nothing changed this time */
  replayed: boolean;
  /** the workspace's credits after the change */
  credits: AdminCreditSummary;
}
