import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('drafts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('status').notNullable().defaultTo('active');
    t.uuid('committed_project_id').references('projects.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'status', 'updated_at']);
    t.check("status in ('active', 'committed')", [], 'drafts_status_valid');
    t.check('length(btrim(name)) > 0', [], 'drafts_name_not_blank');
  });

  await knex.schema.createTable('draft_images', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('draft_id').notNullable().references('drafts.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('source_url').notNullable();
    t.text('resolved_url');
    t.text('source_type').notNullable().defaultTo('uploaded');
    t.integer('order_index').notNullable().defaultTo(0);
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['draft_id', 'order_index']);
  });

  await knex.schema.createTable('draft_jobs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('draft_id').notNullable().references('drafts.id').onDelete('CASCADE');
    t.uuid('draft_image_id').notNullable().references('draft_images.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('model_id').notNullable();
    t.text('mode').notNullable();
    t.text('prompt');
    t.text('status').notNullable().defaultTo('pending');
    t.text('error');
    t.text('workflow_id').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['draft_id', 'created_at']);
    t.index(['user_id', 'created_at']);
    t.check("status in ('pending', 'processing', 'completed', 'failed', 'cancelled')", [], 'draft_jobs_status_valid');
  });

  await knex.schema.createTable('stripe_events', (t) => {
    t.text('id').primary(); // Stripe's event id: a replayed webhook finds its row and changes nothing
    t.text('type').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('processed_at', { useTz: true });
  });

  await knex.schema.createTable('credit_purchases', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('package_id').notNullable();
    t.integer('credits').notNullable();
    t.integer('amount_cents').notNullable();
    t.text('currency').notNullable().defaultTo('nzd');
    t.text('stripe_session_id').unique();
    t.text('status').notNullable().defaultTo('open');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true });
    t.index(['user_id', 'created_at']);
    t.check("status in ('open', 'completed', 'expired')", [], 'credit_purchases_status_valid');
    t.check('credits > 0 and amount_cents >= 0', [], 'credit_purchases_amounts_valid');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['credit_purchases', 'stripe_events', 'draft_jobs', 'draft_images', 'drafts']) {
    await knex.schema.dropTable(table);
  }
}
