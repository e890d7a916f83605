import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('credit_transactions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('profile_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.integer('amount').notNullable(); // signed change to profiles.credits
    t.integer('balance_after').notNullable();
    t.text('transaction_type').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('reference_id');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('idempotency_key').notNullable().unique();
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.text('created_by_email').notNullable().defaultTo('system');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['profile_id', 'created_at']);
    t.check(
      "transaction_type in ('signup_bonus', 'purchase', 'add', 'deduct', 'consume', 'admin_adjust')",
      [],
      'credit_transactions_type_valid',
    );
    t.check('balance_after >= 0', [], 'credit_transactions_balance_not_negative');
  });

  await knex.schema.createTable('credit_reservations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('profile_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('content_type').notNullable();
    t.integer('amount').notNullable();
    t.text('status').notNullable().defaultTo('active');
    t.text('idempotency_key').notNullable().unique();
    t.text('description').notNullable().defaultTo('');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('settled_at', { useTz: true });
    t.index(['profile_id', 'status']);
    t.check("content_type in ('image', 'clip', 'assembly')", [], 'credit_reservations_type_valid');
    t.check("status in ('active', 'consumed', 'released')", [], 'credit_reservations_status_valid');
    t.check('amount >= 0', [], 'credit_reservations_amount_not_negative');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('credit_reservations');
  await knex.schema.dropTable('credit_transactions');
}
