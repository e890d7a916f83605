import type { Knex } from 'knex';

const JOB_STATUSES = "('pending', 'processing', 'completed', 'failed', 'cancelled')";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('pending_approvals', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.text('content_type').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.text('aspect_ratio');
    t.text('file_name').notNullable();
    t.text('original_bucket').notNullable();
    t.text('original_path').notNullable();
    t.text('watermarked_bucket').notNullable();
    t.text('watermarked_path').notNullable();
    t.text('thumbnail_path');
    t.timestamp('approval_deadline', { useTz: true }).notNullable();
    t.integer('cost').notNullable();
    t.integer('remaining_cost').notNullable();
    t.uuid('reservation_id').references('credit_reservations.id').onDelete('SET NULL');
    t.text('workflow_id').notNullable().unique();
    t.text('source_job_id');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('content_id'); // the saved row's id once approved
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('decided_at', { useTz: true });
    t.index(['user_id', 'status', 'created_at']);
    t.check("content_type in ('image', 'clip', 'assembly')", [], 'pending_approvals_type_valid');
    t.check("status in ('pending', 'approved', 'rejected', 'expired')", [], 'pending_approvals_status_valid');
    t.check('cost >= 0 and remaining_cost >= 0 and remaining_cost <= cost', [], 'pending_approvals_cost_valid');
  });

  await knex.schema.createTable('ai_image_edits', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.uuid('project_id').references('projects.id').onDelete('CASCADE');
    t.text('workflow_id').unique();
    t.text('original_image_url').notNullable();
    t.text('edited_image_url');
    t.text('edit_prompt').notNullable();
    t.jsonb('edit_data').notNullable().defaultTo('{}');
    t.text('status').notNullable().defaultTo('completed');
    t.text('error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'created_at']);
    t.check(`status in ${JOB_STATUSES}`, [], 'ai_image_edits_status_valid');
  });

  await knex.schema.createTable('video_generation_jobs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.uuid('render_id').references('renders.id').onDelete('SET NULL');
    t.uuid('image_id').references('images.id').onDelete('SET NULL');
    t.text('status').notNullable().defaultTo('pending');
    t.integer('progress').notNullable().defaultTo(0);
    t.text('message');
    t.text('error');
    t.jsonb('options').notNullable().defaultTo('{}');
    t.jsonb('result');
    t.text('workflow_id').notNullable().unique();
    t.text('provider_job_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'status']);
    t.check(`status in ${JOB_STATUSES}`, [], 'video_generation_jobs_status_valid');
    t.check('progress between 0 and 100', [], 'video_generation_jobs_progress_range');
    t.check('num_nonnulls(render_id, image_id) <= 1', [], 'video_generation_jobs_single_source');
  });

  await knex.schema.createTable('assembly_jobs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.text('platform').notNullable();
    t.specificType('clip_ids', 'uuid[]').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('progress').notNullable().defaultTo(0);
    t.text('message');
    t.text('error');
    t.jsonb('result');
    t.text('workflow_id').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'created_at']);
    t.check(`status in ${JOB_STATUSES}`, [], 'assembly_jobs_status_valid');
    t.check('cardinality(clip_ids) between 1 and 5', [], 'assembly_jobs_clip_count');
  });

  await knex.schema.createTable('aesthetic_chats', (t) => {
    t.uuid('project_id').primary().references('projects.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.jsonb('chat_history').notNullable().defaultTo('[]');
    t.jsonb('preferences').notNullable().defaultTo('{}');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['aesthetic_chats', 'assembly_jobs', 'video_generation_jobs', 'ai_image_edits', 'pending_approvals']) {
    await knex.schema.dropTable(table);
  }
}
