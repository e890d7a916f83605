import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pgcrypto');
  await knex.raw('CREATE EXTENSION IF NOT EXISTS citext');

  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.specificType('email', 'citext').notNullable().unique();
    t.text('password_hash').notNullable();
    t.text('role').notNullable().defaultTo('user');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("role in ('user', 'admin')", [], 'users_role_valid');
  });

  await knex.schema.createTable('sessions', (t) => {
    t.text('id').primary(); // sha256 of the token; the token itself is never stored
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['user_id']);
    t.index(['expires_at']);
  });

  await knex.schema.createTable('profiles', (t) => {
    t.uuid('id').primary().references('users.id').onDelete('CASCADE');
    t.specificType('email', 'citext').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.integer('credits').notNullable().defaultTo(0);
    t.integer('reserved_credits').notNullable().defaultTo(0);
    t.integer('clip_credits').notNullable().defaultTo(0);
    t.integer('image_credits').notNullable().defaultTo(0);
    t.integer('clips_limit').notNullable().defaultTo(0);
    t.integer('images_limit').notNullable().defaultTo(0);
    t.integer('total_credits_purchased').notNullable().defaultTo(0);
    t.integer('total_credits_added').notNullable().defaultTo(0);
    t.integer('total_clips_used').notNullable().defaultTo(0);
    t.integer('total_images_used').notNullable().defaultTo(0);
    t.integer('total_assemblies_used').notNullable().defaultTo(0);
    t.integer('rejection_streak').notNullable().defaultTo(0);
    t.timestamp('rejection_cooldown_until', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check('credits >= 0', [], 'profiles_credits_not_negative');
    t.check('reserved_credits >= 0', [], 'profiles_reserved_not_negative');
    t.check('reserved_credits <= credits', [], 'profiles_reserved_within_credits');
    t.check('rejection_streak >= 0', [], 'profiles_streak_not_negative');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('profiles');
  await knex.schema.dropTable('sessions');
  await knex.schema.dropTable('users');
}
