import type { Knex } from 'knex';

/**
 * Issue 46: with tracing on, a job's row keeps the id of the trace it started in (the Activity view shows it to
 * admins, with a link to the trace viewer), and a webhook event keeps the `traceparent` of the change that recorded
 * it, so its deliveries continue that trace. Null when tracing was off.
 */
const JOB_TABLES = ['video_generation_jobs', 'ai_image_edits', 'assembly_jobs', 'draft_jobs', 'data_exports'];

export async function up(knex: Knex): Promise<void> {
  for (const table of JOB_TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.string('trace_id', 32);
    });
  }
  await knex.schema.alterTable('webhook_events', (t) => {
    t.string('traceparent', 55);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_events', (t) => {
    t.dropColumn('traceparent');
  });
  for (const table of [...JOB_TABLES].reverse()) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('trace_id');
    });
  }
}
