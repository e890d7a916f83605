import type { Knex } from 'knex';

/**
 * An image edit's row is its status (issue 41 item 10: the status call asked the workflow while the workers were busy,
 * p99 1.3 s): written pending when the edit starts, kept current by the workflow at each step (progress, message),
 * and closed with the result or the refusal's code. Rows written before this (finished edits) read as finished: 100.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ai_image_edits', (t) => {
    t.integer('progress').notNullable().defaultTo(100);
    t.text('message');
    t.text('error_code');
    t.jsonb('result');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check('progress between 0 and 100', [], 'ai_image_edits_progress_range');
  });
  // the ones finished before: changed last when they were written
  await knex('ai_image_edits').update({ updated_at: knex.ref('created_at') });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ai_image_edits', (t) => {
    t.dropChecks(['ai_image_edits_progress_range']);
    t.dropColumns('progress', 'message', 'error_code', 'result', 'updated_at');
  });
}
