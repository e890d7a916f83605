import type { Knex } from 'knex';

/**
 * Enhance Renders (Beta) on top of the draft tables of 20261122000500:
 * - profiles.enhance_unlocked_at: the account entered the access code (ENHANCE_ACCESS_CODE) once; every
 *   /api/enhance-set call needs it;
 * - draft_jobs: what a run used and cost (free during the Beta, recorded all the same), its result, and at most
 *   one unfinished job per image (a second dispatch while one runs is refused instead of racing it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('profiles', (t) => {
    t.timestamp('enhance_unlocked_at', { useTz: true });
  });
  await knex.schema.alterTable('draft_jobs', (t) => {
    t.integer('credits_charged').notNullable().defaultTo(0);
    t.text('provider_model');
    t.text('result_url');
    t.jsonb('usage').notNullable().defaultTo('{}');
    t.timestamp('completed_at', { useTz: true });
    t.check('credits_charged >= 0', [], 'draft_jobs_credits_charged_valid');
  });
  await knex.raw(
    "create unique index draft_jobs_one_unfinished_per_image on draft_jobs (draft_image_id) where status in ('pending', 'processing')",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists draft_jobs_one_unfinished_per_image');
  await knex.schema.alterTable('draft_jobs', (t) => {
    t.dropChecks(['draft_jobs_credits_charged_valid']);
    t.dropColumns('credits_charged', 'provider_model', 'result_url', 'usage', 'completed_at');
  });
  await knex.schema.alterTable('profiles', (t) => {
    t.dropColumn('enhance_unlocked_at');
  });
}
