/**
 * Credits spent per member of a workspace (the Billing tab's "spend per member", DESIGN.md "Teams (workspaces)").
 * The workspace's consume rows (the credits charged when an item is approved) are summed twice, each row once per
 * column: by the user who generated the item (`generated`) and by the user who approved it (`approved`; `spent` is
 * the same figure, the field older clients read).
 *
 * Who approved is the consume row's `created_by` (the acting user the ledger records). Who generated is the item's
 * starter: its pending approval's `created_by` (found through the reservation the row charged), else the
 * reservation's `actorId` (an approval row gone with its project; null once its user was deleted), else, for rows recorded before either existed,
 * the row's own `created_by` (the approver was then the starter).
 *
 * Every current member is listed, 0 included. Users who generated or approved in the workspace and are no longer
 * members are listed too (`member: false`), so each column adds up to the workspace's whole spend. Charges whose user
 * was deleted (the user column set null by the foreign key, or an `actorId` with no user) are one line, 'deleted
 * account', without a user id or an e-mail.
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
  /** credits charged in the workspace for items this user generated, a whole number >= 0 */
  generated: number;
  /** credits charged in the workspace on approvals this user made, a whole number >= 0 */
  approved: number;
  /** the same as `approved` (what this field has always held) */
  spent: number;
  /** true for the one line gathering the charges of deleted accounts */
  deleted: boolean;
  /** whether the user is a member of the workspace now */
  member: boolean;
}

interface SumRow {
  user_id: string | null;
  credits: string | number;
}

interface PersonRow {
  id: string;
  email: string;
  name: string | null;
}

/** Most generated first, then most approved, then by name; the 'deleted account' line last among equals. */
function bySpend(a: MemberSpend, b: MemberSpend): number {
  if (b.generated !== a.generated) return b.generated - a.generated;
  if (b.approved !== a.approved) return b.approved - a.approved;
  if (a.deleted !== b.deleted) return a.deleted ? 1 : -1;
  return (a.name || a.email || '').localeCompare(b.name || b.email || '');
}

/** Charged credits by approving user (null: deleted accounts). */
async function approvedBy(db: Knex | Knex.Transaction, workspaceId: string): Promise<SumRow[]> {
  return db('credit_transactions')
    .where({ workspace_id: workspaceId, transaction_type: 'consume' })
    .groupBy('created_by')
    .select('created_by as user_id', db.raw('sum(-amount) as credits'));
}

/** Charged credits by the user who generated the item (null: deleted accounts). */
async function generatedBy(db: Knex | Knex.Transaction, workspaceId: string): Promise<SumRow[]> {
  const { rows } = await db.raw<{ rows: SumRow[] }>(
    `select starter.user_id, sum(-t.amount) as credits
       from credit_transactions t
       left join credit_reservations r on r.id::text = t.reference_id and r.workspace_id = t.workspace_id
       left join (select distinct on (a.reservation_id) true as found, a.reservation_id, a.created_by
                    from pending_approvals a
                   where a.workspace_id = :workspaceId and a.reservation_id is not null
                   order by a.reservation_id, a.created_at) pa on pa.reservation_id = r.id
       left join users actor
         on actor.id = case when r.metadata->>'actorId' ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then (r.metadata->>'actorId')::uuid end
       cross join lateral (
         select case
                  when pa.created_by is not null then pa.created_by
                  when r.metadata -> 'actorId' is not null then actor.id
                  when pa.found is null then t.created_by
                end as user_id
       ) starter
      where t.workspace_id = :workspaceId and t.transaction_type = 'consume'
      group by starter.user_id`,
    { workspaceId },
  );
  return rows;
}

const sums = (rows: SumRow[]) => new Map<string | null, number>(rows.map((r) => [r.user_id, Number(r.credits)]));

export async function spendByMember(db: Knex | Knex.Transaction, workspaceId: string): Promise<MemberSpend[]> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const profile = await db('profiles').where({ id: workspaceId }).first('id');
  if (!profile) throw new ProfileNotFoundError();

  const [approvedRows, generatedRows] = [await approvedBy(db, workspaceId), await generatedBy(db, workspaceId)];
  const approved = sums(approvedRows);
  const generated = sums(generatedRows);

  const memberIds = (await db('workspace_members').where({ workspace_id: workspaceId }).pluck('user_id')) as string[];
  const spenders = [...approved.keys(), ...generated.keys()].filter((id): id is string => id !== null);
  const ids = [...new Set([...memberIds, ...spenders])];
  // a user's name is on their personal workspace's account row (whose id is theirs)
  const people: PersonRow[] = ids.length
    ? await db('users as u').leftJoin('profiles as p', 'p.id', 'u.id').whereIn('u.id', ids).select('u.id', 'u.email', 'p.name')
    : [];
  const members = new Set(memberIds);
  const lines: MemberSpend[] = people.map((person) => {
    const byThem = approved.get(person.id) ?? 0;
    return {
      userId: person.id,
      name: person.name ?? '',
      email: person.email,
      generated: generated.get(person.id) ?? 0,
      approved: byThem,
      spent: byThem,
      deleted: false,
      member: members.has(person.id),
    };
  });
  if (approved.has(null) || generated.has(null)) {
    const byDeleted = approved.get(null) ?? 0;
    lines.push({ userId: null, name: DELETED_ACCOUNT_NAME, email: null, generated: generated.get(null) ?? 0, approved: byDeleted, spent: byDeleted, deleted: true, member: false });
  }
  return lines.sort(bySpend);
}
