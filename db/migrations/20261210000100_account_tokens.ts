import type { Knex } from 'knex';

/**
 * One-time links of an account (DESIGN.md "Accounts"): a password reset, the verification of the account's e-mail,
 * the verification of a new e-mail before it replaces the old one. Only the sha256 of the 32 random bytes the link
 * carries is kept; a link is good until `expires_at` and once (`used_at`). `new_email` is the address an
 * `email_change` link confirms.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('purpose').notNullable();
    t.text('token_hash').notNullable().unique();
    t.text('new_email');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['user_id', 'purpose', 'created_at'], 'account_tokens_user_id_purpose');
  });
  await knex.raw(`alter table account_tokens add constraint account_tokens_purpose_valid check (purpose in ('reset', 'verify', 'email_change'))`);
  await knex.raw(`alter table account_tokens add constraint account_tokens_hash_valid check (token_hash ~ '^[0-9a-f]{64}$')`);
  await knex.raw(`alter table account_tokens add constraint account_tokens_new_email_valid check ((purpose = 'email_change') = (new_email is not null))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('account_tokens');
}
