import type { Knex } from 'knex';

/**
 * Resumable (tus) render uploads: who started each one and into which project, so only its owner can resume it, and
 * what became of it. The bytes themselves sit in the tus store (a folder or an S3 bucket) until the upload completes
 * and goes through the same checks and render row as POST /api/upload/renders.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('resumable_uploads', (t) => {
    t.text('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.text('file_name').notNullable();
    t.bigInteger('size').notNullable();
    t.text('status').notNullable().defaultTo('uploading');
    t.uuid('render_id').references('renders.id').onDelete('SET NULL');
    t.text('error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.index(['user_id']);
    t.index(['status', 'created_at']);
  });
  await knex.raw("alter table resumable_uploads add constraint resumable_uploads_status check (status in ('uploading', 'completed', 'failed', 'expired'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('resumable_uploads');
}
