/**
 * The acting user of a generation (DESIGN.md "Teams (workspaces)"): the account a job belongs to is its workspace,
 * and the member who started it is recorded apart, in the job tables' `created_by` (references users, set null when the
 * user is deleted). Runs started before workspaces carry no actor: their account was their owner's personal
 * workspace, whose id is the owner's user id, so the account stands in for the actor.
 */
import type { Knex } from 'knex';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The actor a workflow input names, else (a history from before workspaces) its workspace. */
export function actorOf(input: { workspaceId: string; actorId?: string | null }): string {
  return input.actorId || input.workspaceId;
}

/**
 * The value to write to a `created_by` column: the user's id while the user exists, else null. A subquery rather
 * than the id itself, so a member deleted while their job ran does not make the write fail on the foreign key (and an
 * account id that is not a user's, a team workspace's, records nobody).
 */
export function createdByValue(db: Knex | Knex.Transaction, actorId: string | null | undefined): Knex.Raw | null {
  return actorId && UUID.test(actorId) ? db.raw('(select id from users where id = ?)', [actorId]) : null;
}
