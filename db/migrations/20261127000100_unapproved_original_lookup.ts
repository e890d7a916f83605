import type { Knex } from 'knex';

/**
 * The file routes refuse the original of an item that is not approved (services/unapprovedOriginals.ts): one probe
 * of this index per request. Partial on the states that are refused, so the rows of approved items (the bulk, over
 * time) are not in it; the lookup's `status <> 'approved'` is written as a literal so the planner can use it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "create index pending_approvals_unapproved_original on pending_approvals (original_bucket, original_path) where status <> 'approved'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists pending_approvals_unapproved_original');
}
