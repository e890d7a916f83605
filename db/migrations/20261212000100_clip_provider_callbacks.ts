import type { Knex } from 'knex';

/**
 * Issue 46: a hosted clip's provider calls back when its job ends (fal's webhook). `provider_called_back_at` is set by
 * the first verified callback for the job's own provider request: a second one (a replay, fal's retry after our answer
 * was lost) finds it set and changes nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('video_generation_jobs', (t) => {
    t.timestamp('provider_called_back_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('video_generation_jobs', (t) => {
    t.dropColumn('provider_called_back_at');
  });
}
