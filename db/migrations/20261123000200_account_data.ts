import type { Knex } from 'knex';

/**
 * Data exports (one row per requested zip, numbered per user) and the account-deletion mark: once set, the
 * user can no longer sign in and the deletion workflow removes everything, the users row last.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.timestamp('deletion_requested_at', { useTz: true });
  });

  await knex.schema.createTable('data_exports', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.integer('sequence').notNullable(); // n of the workflow id export-<userId>-<n>
    t.text('workflow_id').notNullable().unique();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('progress').notNullable().defaultTo(0);
    t.text('message');
    t.text('error');
    t.text('storage_bucket');
    t.text('storage_path');
    t.text('file_name');
    t.bigInteger('size_bytes');
    t.integer('file_count');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('link_expires_at', { useTz: true });
    t.unique(['user_id', 'sequence'], { indexName: 'data_exports_user_sequence_unique' });
    t.check("status in ('pending', 'processing', 'completed', 'failed')", [], 'data_exports_status_valid');
    t.check('progress between 0 and 100', [], 'data_exports_progress_range');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('data_exports');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('deletion_requested_at');
  });
}
