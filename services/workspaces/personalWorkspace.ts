/**
 * The workspace every user has from sign-up on: theirs alone until they invite someone, with the id of the user
 * (db/migrations/20261127000700_workspaces.ts explains why), the user as owner, and the account row (`profiles`)
 * that holds its credits.
 */
import type { Knex } from 'knex';

export const PERSONAL_WORKSPACE_NAME = 'Personal';

/** Creates the user's personal workspace, their owner membership and its account row, inside `trx`. */
export async function createPersonalWorkspace(trx: Knex | Knex.Transaction, user: { id: string; email: string; name?: string }): Promise<void> {
  await trx('workspaces').insert({ id: user.id, name: PERSONAL_WORKSPACE_NAME, personal_user_id: user.id, created_by: user.id });
  await trx('workspace_members').insert({ workspace_id: user.id, user_id: user.id, role: 'owner' });
  await trx('profiles').insert({ id: user.id, email: user.email, name: user.name ?? '' });
}
