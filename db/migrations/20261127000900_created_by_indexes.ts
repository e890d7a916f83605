import type { Knex } from 'knex';

/**
 * Indexes on the acting-user columns. Account deletion clears `created_by` of the user's rows in workspaces shared
 * with others (their jobs, pending items and ledger rows stay with the workspace) and finds their running jobs there;
 * without these each deletion scans every one of these tables. Spend per member groups a workspace's ledger by it.
 */
const TABLES = ['video_generation_jobs', 'assembly_jobs', 'ai_image_edits', 'draft_jobs', 'pending_approvals', 'credit_transactions'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`create index if not exists ${table}_created_by on ${table} (created_by) where created_by is not null`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw(`drop index if exists ${table}_created_by`);
}
