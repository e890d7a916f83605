import type { Knex } from 'knex';

/**
 * A draft's view shows each image's newest job (services/generation/drafts.ts imageViews): one probe per image (a draft
 * holds at most 4) that walks this index from its newest entry and stops at the first, so the view reads 4 rows however
 * long the draft's history grows. Before it, `distinct on (draft_image_id)` read and sorted every job of the draft
 * (docs/growth.md). Purely additive.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists draft_jobs_image_newest on draft_jobs (draft_image_id, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists draft_jobs_image_newest');
}
