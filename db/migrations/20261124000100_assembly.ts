import type { Knex } from 'knex';

/**
 * Video assembly (issue 10): the chat's full state per project beside its history and preferences, the editing
 * config an assembly job runs with, and the compiled video's lineage (the workflow that made it, one row per run).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('aesthetic_chats', (t) => {
    t.jsonb('editing_config').notNullable().defaultTo('{}');
    t.jsonb('analysis').notNullable().defaultTo('{}');
    t.jsonb('workflow_analysis').notNullable().defaultTo('{}');
    t.jsonb('clip_suggestions').notNullable().defaultTo('[]');
  });
  await knex.schema.alterTable('assembly_jobs', (t) => {
    // the editing config and the timeline built from it when the job started (what the worker renders)
    t.jsonb('options').notNullable().defaultTo('{}');
  });
  await knex.schema.alterTable('compiled_videos', (t) => {
    t.text('workflow_id').unique();
    t.uuid('assembly_job_id').references('assembly_jobs.id').onDelete('SET NULL');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('compiled_videos', (t) => {
    t.dropColumn('assembly_job_id');
    t.dropColumn('workflow_id');
  });
  await knex.schema.alterTable('assembly_jobs', (t) => {
    t.dropColumn('options');
  });
  await knex.schema.alterTable('aesthetic_chats', (t) => {
    t.dropColumn('clip_suggestions');
    t.dropColumn('workflow_analysis');
    t.dropColumn('analysis');
    t.dropColumn('editing_config');
  });
}
