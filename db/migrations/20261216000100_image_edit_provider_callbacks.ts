import type { Knex } from 'knex';

/**
 * Issue 46: a hosted image edit's provider calls back when each of its jobs (the edit, then the upscale) ends (fal's
 * webhook). `provider_job_id` is the provider job the run waits for now; `provider_called_back_at` is set by the first
 * verified callback for it (or by the fallback look that found it done): a second one (a replay, fal's retry after our
 * answer was lost, a callback after the look) finds it set and changes nothing. Submitting the next job sets both anew.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ai_image_edits', (t) => {
    t.text('provider_job_id');
    t.timestamp('provider_called_back_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ai_image_edits', (t) => {
    t.dropColumn('provider_called_back_at');
    t.dropColumn('provider_job_id');
  });
}
