/**
 * What admins do (DESIGN.md "Billing": "Admins (a role on the profile, granted by a CLI command) adjust credits
 * with a reason; the ledger records who"): find a user by e-mail, read their credits, purchases and ledger,
 * correct the balance, and the role itself (granted and revoked by `npm run admin`).
 * The routes in api/routes/admin.ts check the role; these functions trust their caller.
 */
import type { Knex } from 'knex';
import { CreditPurchase } from '../../db/models/CreditPurchase';
import { User, type UserRole } from '../../db/models/User';
import { UserNotFoundError } from '../../domain/errors';
import {
  ADMIN_PURCHASES_LIMIT,
  ADMIN_SEARCH_DEFAULT_LIMIT,
  ADMIN_SEARCH_MAX_LIMIT,
  type AdminAdjustResult,
  type AdminUserDetail,
  type AdminUserListItem,
  type AdminUserSearch,
} from '../../domain/admin';
import { adminAdjustCredits, checkLedgerInvariant, getCreditSummary, listTransactions, ProfileNotFoundError, type CreditActor } from '../billing/credits';

type Db = Knex | Knex.Transaction;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RoleChange {
  user: { id: string; email: string; role: UserRole };
  /** false when the user already had the role asked for */
  changed: boolean;
}

/** `%`, `_` and `\` match themselves in the prefix search. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

interface UserRow {
  id: string;
  email: string;
  role: UserRole;
  created_at: Date;
  name: string;
  credits: number;
  reserved_credits: number;
}

function toListItem(row: UserRow): AdminUserListItem {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    credits: row.credits,
    reservedCredits: row.reserved_credits,
    availableCredits: row.credits - row.reserved_credits,
    createdAt: row.created_at.toISOString(),
  };
}

/** Users whose e-mail equals or starts with `emailQuery` (case-insensitive): the exact match first, then by e-mail. */
export async function searchUsersByEmail(db: Db, emailQuery: string, limit = ADMIN_SEARCH_DEFAULT_LIMIT): Promise<AdminUserSearch> {
  const query = emailQuery.trim();
  const take = Math.min(Math.max(1, Math.trunc(limit)), ADMIN_SEARCH_MAX_LIMIT);
  if (!query) return { users: [], hasMore: false };
  const rows: UserRow[] = await db('users as u')
    .join('profiles as p', 'p.id', 'u.id')
    .whereRaw("lower(u.email::text) like ? escape '\\'", [`${escapeLike(query.toLowerCase())}%`])
    .orderByRaw('(lower(u.email::text) = ?) desc, lower(u.email::text) collate "C" asc', [query.toLowerCase()])
    .limit(take + 1)
    .select('u.id', 'u.email', 'u.role', 'u.created_at', 'p.name', 'p.credits', 'p.reserved_credits');
  return { users: rows.slice(0, take).map(toListItem), hasMore: rows.length > take };
}

/** Everything an admin needs to judge a credit question about one user. */
export async function getUserForAdmin(db: Db, userId: string): Promise<AdminUserDetail> {
  if (!UUID_RE.test(userId)) throw new UserNotFoundError();
  const row: UserRow | undefined = await db('users as u')
    .join('profiles as p', 'p.id', 'u.id')
    .where('u.id', userId)
    .first('u.id', 'u.email', 'u.role', 'u.created_at', 'p.name', 'p.credits', 'p.reserved_credits');
  if (!row) throw new UserNotFoundError();
  const [credits, purchases, page, invariant] = await Promise.all([
    getCreditSummary(db, userId),
    CreditPurchase.query(db)
      .where({ user_id: userId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(ADMIN_PURCHASES_LIMIT),
    listTransactions(db, userId, 1),
    checkLedgerInvariant(db, userId),
  ]);
  return {
    user: { id: row.id, email: row.email, name: row.name, role: row.role, createdAt: row.created_at.toISOString() },
    credits,
    purchases: purchases.map((p) => ({
      id: p.id,
      packageId: p.packageId,
      credits: p.credits,
      amountCents: p.amountCents,
      currency: p.currency,
      status: p.status,
      createdAt: p.createdAt.toISOString(),
      completedAt: p.completedAt ? p.completedAt.toISOString() : null,
    })),
    transactions: page.transactions.map((t) => ({
      id: t.id,
      amount: t.amount,
      transactionType: t.transactionType,
      description: t.description,
      referenceId: t.referenceId,
      createdAt: t.createdAt.toISOString(),
      createdByEmail: t.createdByEmail,
    })),
    transactionsTotal: page.total,
    ledger: { ok: invariant.ok, ledgerSum: invariant.ledgerSum, activeReservationsSum: invariant.activeReservationsSum },
  };
}

export interface AdjustUserCreditsInput {
  userId: string;
  /** signed, non-zero whole credits */
  amount: number;
  reason: string;
  /** the client's key for this adjustment: a retry with the same key changes nothing twice */
  idempotencyKey: string;
}

/**
 * A signed correction recorded in the ledger with the admin's id and e-mail. Refused (nothing written) when it
 * would leave the user's available credits below zero. The key is scoped to the admin, so two admins' keys never collide.
 */
export async function adjustUserCredits(db: Db, admin: CreditActor, input: AdjustUserCreditsInput): Promise<AdminAdjustResult> {
  try {
    const entry = await adminAdjustCredits(db, {
      profileId: input.userId,
      amount: input.amount,
      reason: input.reason.trim(),
      idempotencyKey: `admin-adjust:${admin.id}:${input.idempotencyKey}`,
      admin,
    });
    return {
      id: entry.id,
      userId: entry.profileId,
      amount: entry.amount,
      balanceAfter: entry.balanceAfter,
      transactionType: entry.transactionType,
      description: entry.description,
      createdByEmail: entry.createdByEmail,
      createdAt: entry.createdAt.toISOString(),
      replayed: entry.replayed,
      credits: await getCreditSummary(db, input.userId),
    };
  } catch (err) {
    if (err instanceof ProfileNotFoundError) throw new UserNotFoundError();
    throw err;
  }
}

function normalizedEmail(email: string): string {
  return email.trim().toLowerCase();
}

async function setRole(db: Db, email: string, role: UserRole): Promise<RoleChange> {
  const address = normalizedEmail(email);
  const user = await User.query(db).findOne('email', address);
  if (!user) throw new UserNotFoundError(address);
  if (user.role === role) return { user: { id: user.id, email: user.email, role }, changed: false };
  await User.query(db).patch({ role }).where('id', user.id);
  return { user: { id: user.id, email: user.email, role }, changed: true };
}

/** Gives the account with this e-mail the admin role; granting it twice changes nothing. */
export function grantAdminRole(db: Db, email: string): Promise<RoleChange> {
  return setRole(db, email, 'admin');
}

/** Takes the admin role away (the user keeps their account); revoking twice changes nothing. */
export function revokeAdminRole(db: Db, email: string): Promise<RoleChange> {
  return setRole(db, email, 'user');
}

export async function listAdmins(db: Db): Promise<{ id: string; email: string; createdAt: Date }[]> {
  const admins = await User.query(db).where('role', 'admin').orderBy('email');
  return admins.map((u) => ({ id: u.id, email: u.email, createdAt: u.createdAt }));
}
