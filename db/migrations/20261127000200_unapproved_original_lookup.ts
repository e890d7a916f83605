import type { Knex } from 'knex';

/**
 * The file routes refuse the original of an item that is not approved, and the thumbnail made from it
 * (services/content/unapprovedOriginals.ts): one indexed probe per request. Partial on the states that are refused, so the
 * rows of approved items (the bulk, over time) are not in them; the lookup's `status <> 'approved'` is written as a
 * literal so the planner can use them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "create index pending_approvals_unapproved_original on pending_approvals (original_bucket, original_path) where status <> 'approved'",
  );
  await knex.raw(
    "create index pending_approvals_unapproved_thumbnail on pending_approvals (original_bucket, thumbnail_path) where status <> 'approved' and thumbnail_path is not null",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists pending_approvals_unapproved_thumbnail');
  await knex.raw('drop index if exists pending_approvals_unapproved_original');
}
