import type { Knex } from 'knex';

/**
 * A failed draft job stays on its image's card with its reason and a Retry until the user dismisses it (issue 32):
 * - draft_jobs.request: what the dispatch asked (its prompt as typed, reference URLs, Sync Images' pinned image), so
 *   Retry asks the same again through the same checks;
 * - draft_jobs.failure_dismissed_at: when the user dismissed the failure (the card shows it no more).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('draft_jobs', (t) => {
    t.jsonb('request');
    t.timestamp('failure_dismissed_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('draft_jobs', (t) => {
    t.dropColumns('request', 'failure_dismissed_at');
  });
}
