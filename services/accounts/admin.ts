/**
 * What admins do (DESIGN.md "Billing": "Admins (a role on the profile, granted by a CLI command) adjust credits
 * with a reason; the ledger records who"): find a user by e-mail, read their credits, purchases and ledger,
 * correct the balance, and the role itself (granted and revoked by `npm run admin`).
 * The routes in api/routes/admin.ts check the role; these functions trust their caller.
 *
 * Site admin is not a workspace role (DESIGN.md "Teams (workspaces)"): it keeps its name and reaches every workspace.
 * Credits belong to workspaces, so an adjustment names a workspace: by id, by a member's e-mail (their personal one,
 * or the one of a given name they belong to) or by its name when only one workspace has it.
 */
import type { Knex } from 'knex';
import { CreditPurchase } from '../../db/models/CreditPurchase';
import { User, type UserRole } from '../../db/models/User';
import { DomainError, UserNotFoundError } from '../../domain/errors';
import {
  ADMIN_PURCHASES_LIMIT,
  ADMIN_SEARCH_DEFAULT_LIMIT,
  ADMIN_SEARCH_MAX_LIMIT,
  type AdminAdjustResult,
  type AdminAdjustTarget,
  type AdminUserDetail,
  type AdminUserListItem,
  type AdminUserSearch,
  type AdminUserWorkspace,
  type AdminWorkspaceMatch,
} from '../../domain/admin';
import { isWorkspaceRole } from '../../domain/workspaceRoles';
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
  const [credits, purchases, page, invariant, workspaces] = await Promise.all([
    getCreditSummary(db, userId),
    CreditPurchase.query(db)
      .where({ workspace_id: userId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(ADMIN_PURCHASES_LIMIT),
    listTransactions(db, userId, 1),
    checkLedgerInvariant(db, userId),
    userWorkspaces(db, userId),
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
    workspaces,
  };
}

interface WorkspaceRow {
  id: string;
  name: string;
  personal_user_id: string | null;
  member_count: number;
  credits: number;
  reserved_credits: number;
}

const WORKSPACE_COLUMNS = [
  'w.id',
  'w.name',
  'w.personal_user_id',
  'p.credits',
  'p.reserved_credits',
] as const;

function memberCount(db: Db) {
  return db.raw('(select count(*)::int from workspace_members c where c.workspace_id = w.id) as member_count');
}

function toWorkspaceSummary(row: WorkspaceRow) {
  return {
    id: row.id,
    name: row.name,
    personal: row.personal_user_id !== null,
    memberCount: Number(row.member_count),
    credits: row.credits,
    reservedCredits: row.reserved_credits,
    availableCredits: row.credits - row.reserved_credits,
  };
}

/** The user's workspaces with their role, member count and balance: their personal one first, then by name. */
export async function userWorkspaces(db: Db, userId: string): Promise<AdminUserWorkspace[]> {
  const rows: Array<WorkspaceRow & { role: string }> = await db('workspace_members as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .join('profiles as p', 'p.id', 'w.id')
    .where('m.user_id', userId)
    .orderByRaw('(w.personal_user_id = ?) desc nulls last, lower(w.name), w.id', [userId])
    .select(...WORKSPACE_COLUMNS, 'm.role', memberCount(db));
  return rows.map((row) => ({ ...toWorkspaceSummary(row), role: isWorkspaceRole(row.role) ? row.role : 'viewer' }));
}

/** Workspaces whose name is `name` (case and surrounding spaces aside), with their owners; at most `limit`. */
export async function searchWorkspacesByName(db: Db, name: string, limit = ADMIN_SEARCH_DEFAULT_LIMIT): Promise<{ workspaces: AdminWorkspaceMatch[]; hasMore: boolean }> {
  const wanted = name.trim().toLowerCase();
  const take = Math.min(Math.max(1, Math.trunc(limit)), ADMIN_SEARCH_MAX_LIMIT);
  if (!wanted) return { workspaces: [], hasMore: false };
  const rows: WorkspaceRow[] = await db('workspaces as w')
    .join('profiles as p', 'p.id', 'w.id')
    .whereRaw('lower(btrim(w.name)) = ?', [wanted])
    .orderBy([{ column: 'w.created_at' }, { column: 'w.id' }])
    .limit(take + 1)
    .select(...WORKSPACE_COLUMNS, memberCount(db));
  const shown = rows.slice(0, take);
  const owners: Array<{ workspace_id: string; id: string; email: string }> = shown.length
    ? await db('workspace_members as m')
        .join('users as u', 'u.id', 'm.user_id')
        .whereIn(
          'm.workspace_id',
          shown.map((r) => r.id),
        )
        .andWhere('m.role', 'owner')
        .orderBy([{ column: 'm.created_at' }, { column: 'u.email' }])
        .select('m.workspace_id', 'u.id', 'u.email')
    : [];
  return {
    workspaces: shown.map((row) => ({
      ...toWorkspaceSummary(row),
      owners: owners.filter((o) => o.workspace_id === row.id).map((o) => ({ id: o.id, email: o.email })),
    })),
    hasMore: rows.length > take,
  };
}

export class AdminWorkspaceNotFoundError extends DomainError {
  constructor(message: string) {
    super(404, 'WORKSPACE_NOT_FOUND', message);
  }
}

/** A name more than one workspace has: refused, with the matches, so the admin can name the one they mean. */
export class AmbiguousWorkspaceError extends DomainError {
  constructor(
    readonly matches: AdminWorkspaceMatch[],
    name: string,
    more: boolean,
  ) {
    const listed = matches.map((m) => `“${m.name}” (id ${m.id}, owner ${m.owners.map((o) => o.email).join(', ') || 'none'}, ${m.memberCount} ${m.memberCount === 1 ? 'member' : 'members'})`);
    super(
      409,
      'WORKSPACE_AMBIGUOUS',
      `${more ? 'More than ' : ''}${matches.length} workspaces are named “${name}”: ${listed.join('; ')}${more ? '; ...' : ''}. Name a member's e-mail as well, or the workspace id.`,
    );
  }
}

export interface AdjustTargetWorkspace {
  id: string;
  name: string;
  personal: boolean;
}

/** The AdminAdjustTarget forms that name nothing, or more than one way at once. */
export function adjustTargetProblem(target: AdminAdjustTarget): string | null {
  const ways = [target.workspaceId !== undefined, target.userId !== undefined, target.email !== undefined || target.workspace !== undefined].filter(Boolean).length;
  if (ways === 0) return 'Name the workspace: workspaceId, userId, a workspace name (workspace) or a member e-mail (email)';
  if (ways > 1) return 'Name the workspace one way only: workspaceId, userId, or workspace and/or email';
  return null;
}

/**
 * The workspace an adjustment changes (see AdminAdjustTarget): 404 for a name, e-mail or id that finds none, 409
 * for a name that finds several (listing them).
 */
export async function findAdjustTarget(db: Db, target: AdminAdjustTarget): Promise<AdjustTargetWorkspace> {
  const problem = adjustTargetProblem(target);
  if (problem) throw new DomainError(400, 'VALIDATION_ERROR', problem);
  const pick = (row: { id: string; name: string; personal_user_id: string | null }) => ({ id: row.id, name: row.name, personal: row.personal_user_id !== null });
  if (target.workspaceId !== undefined || target.userId !== undefined) {
    const id = (target.workspaceId ?? target.userId) as string;
    if (!UUID_RE.test(id)) throw target.userId !== undefined ? new UserNotFoundError() : new AdminWorkspaceNotFoundError('Workspace not found');
    const row = await db('workspaces')
      .where(target.userId !== undefined ? { personal_user_id: id } : { id })
      .first<{ id: string; name: string; personal_user_id: string | null } | undefined>('id', 'name', 'personal_user_id');
    if (!row) throw target.userId !== undefined ? new UserNotFoundError() : new AdminWorkspaceNotFoundError('Workspace not found');
    return pick(row);
  }
  const name = target.workspace?.trim();
  if (target.email !== undefined) {
    const address = normalizedEmail(target.email);
    const user = await db('users').whereRaw('lower(email::text) = ?', [address]).first<{ id: string } | undefined>('id');
    if (!user) throw new UserNotFoundError(address);
    if (!name) {
      const own = await db('workspaces').where({ personal_user_id: user.id }).first<{ id: string; name: string; personal_user_id: string } | undefined>('id', 'name', 'personal_user_id');
      if (!own) throw new AdminWorkspaceNotFoundError(`${address} has no personal workspace`);
      return pick(own);
    }
    const theirs = (await userWorkspaces(db, user.id)).filter((w) => w.name.trim().toLowerCase() === name.toLowerCase());
    if (theirs.length === 0) throw new AdminWorkspaceNotFoundError(`${address} is not a member of a workspace named “${name}”`);
    if (theirs.length > 1) {
      const { workspaces } = await searchWorkspacesByName(db, name, ADMIN_SEARCH_MAX_LIMIT);
      throw new AmbiguousWorkspaceError(
        workspaces.filter((w) => theirs.some((t) => t.id === w.id)),
        name,
        false,
      );
    }
    return { id: theirs[0].id, name: theirs[0].name, personal: theirs[0].personal };
  }
  if (!name) throw new DomainError(400, 'VALIDATION_ERROR', 'The workspace name must not be blank');
  const { workspaces, hasMore } = await searchWorkspacesByName(db, name, 10);
  if (workspaces.length === 0) throw new AdminWorkspaceNotFoundError(`No workspace is named “${name}”`);
  if (workspaces.length > 1) throw new AmbiguousWorkspaceError(workspaces, name, hasMore);
  return { id: workspaces[0].id, name: workspaces[0].name, personal: workspaces[0].personal };
}

export interface AdjustUserCreditsInput extends AdminAdjustTarget {
  /** signed, non-zero whole credits */
  amount: number;
  reason: string;
  /** the client's key for this adjustment: a retry with the same key changes nothing twice */
  idempotencyKey: string;
}

/**
 * A signed correction of a workspace's balance (found by findAdjustTarget), recorded in the ledger with the site
 * admin as the acting user (id and e-mail). Refused (nothing written) when it would leave the workspace's available
 * credits below zero. The key is scoped to the admin, so two admins' keys never collide.
 */
export async function adjustUserCredits(db: Db, admin: CreditActor, input: AdjustUserCreditsInput): Promise<AdminAdjustResult> {
  const workspace = await findAdjustTarget(db, input);
  try {
    const entry = await adminAdjustCredits(db, {
      workspaceId: workspace.id,
      amount: input.amount,
      reason: input.reason.trim(),
      idempotencyKey: `admin-adjust:${admin.id}:${input.idempotencyKey}`,
      admin,
    });
    return {
      id: entry.id,
      userId: entry.workspaceId,
      workspace,
      amount: entry.amount,
      balanceAfter: entry.balanceAfter,
      transactionType: entry.transactionType,
      description: entry.description,
      createdByEmail: entry.createdByEmail,
      createdAt: entry.createdAt.toISOString(),
      replayed: entry.replayed,
      credits: await getCreditSummary(db, workspace.id),
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
