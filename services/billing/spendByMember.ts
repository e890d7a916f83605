/**
 * Credits spent per member of a workspace (the Billing tab's "spend per member", DESIGN.md "Teams (workspaces)"):
 * the workspace's consume rows (the credits charged when an item is approved) summed by the user who approved
 * them (`credit_transactions.created_by`, the acting user the ledger records).
 *
 * Every current member is listed, spent 0 included. Users who spent in the workspace and are no longer members
 * are listed too (`member: false`), so the rows add up to the workspace's whole spend. Rows whose user was deleted
 * (created_by set null by the foreign key) are one line, 'deleted account', without a user id or an e-mail.
 */
import type { Knex } from 'knex';
import { ProfileNotFoundError } from './credits';
import { UUID_RE } from './creditLedger/ledger';

export const DELETED_ACCOUNT_NAME = 'deleted account';

export interface MemberSpend {
  /** null for the 'deleted account' line */
  userId: string | null;
  name: string;
  email: string | null;
  /** credits charged on approvals by this user in the workspace (consume rows), a whole number >= 0 */
  spent: number;
  /** true for the one line gathering the rows of deleted accounts */
  deleted: boolean;
  /** whether the user is a member of the workspace now */
  member: boolean;
}

interface SpendRow {
  created_by: string | null;
  spent: string | number;
}

interface PersonRow {
  id: string;
  email: string;
  name: string | null;
}

/** Most spent first, then by name; the 'deleted account' line last among equals. */
function bySpend(a: MemberSpend, b: MemberSpend): number {
  if (b.spent !== a.spent) return b.spent - a.spent;
  if (a.deleted !== b.deleted) return a.deleted ? 1 : -1;
  return (a.name || a.email || '').localeCompare(b.name || b.email || '');
}

export async function spendByMember(db: Knex | Knex.Transaction, workspaceId: string): Promise<MemberSpend[]> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const profile = await db('profiles').where({ id: workspaceId }).first('id');
  if (!profile) throw new ProfileNotFoundError();

  const spends: SpendRow[] = await db('credit_transactions')
    .where({ workspace_id: workspaceId, transaction_type: 'consume' })
    .groupBy('created_by')
    .select('created_by', db.raw('coalesce(sum(-amount), 0) as spent'));
  const spentBy = new Map<string | null, number>(spends.map((r) => [r.created_by, Number(r.spent)]));

  const memberIds = (await db('workspace_members').where({ workspace_id: workspaceId }).pluck('user_id')) as string[];
  const ids = [...new Set([...memberIds, ...spends.map((r) => r.created_by).filter((id): id is string => id !== null)])];
  // a user's name is on their personal workspace's account row (whose id is theirs)
  const people: PersonRow[] = ids.length
    ? await db('users as u').leftJoin('profiles as p', 'p.id', 'u.id').whereIn('u.id', ids).select('u.id', 'u.email', 'p.name')
    : [];
  const members = new Set(memberIds);
  const lines: MemberSpend[] = people.map((person) => ({
    userId: person.id,
    name: person.name ?? '',
    email: person.email,
    spent: spentBy.get(person.id) ?? 0,
    deleted: false,
    member: members.has(person.id),
  }));
  const deletedSpent = spentBy.get(null);
  if (deletedSpent !== undefined) {
    lines.push({ userId: null, name: DELETED_ACCOUNT_NAME, email: null, spent: deletedSpent, deleted: true, member: false });
  }
  return lines.sort(bySpend);
}
