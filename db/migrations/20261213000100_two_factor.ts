import type { Knex } from 'knex';

/**
 * Two-factor sign-in (DESIGN.md "Accounts"):
 * - `totp_factors`: one authenticator app per account. The secret is kept encrypted (AES-256-GCM,
 *   services/accounts/totpSecrets.ts), never in clear; `confirmed_at` is null until the first code proved the set-up;
 *   `last_used_step` is the last accepted 30-second step, so a code is good once.
 * - `recovery_codes`: 10 single-use codes per account, only their sha256 kept.
 * - `passkeys`: WebAuthn credentials (public key, signature counter), named by their owner.
 * - `webauthn_challenges`: a challenge handed to a browser for one registration or one assertion, 5 minutes, once.
 * - `pending_sign_ins`: a password that was right, waiting for its second step: 32 random bytes (sha256 kept),
 *   5 minutes, once, at most 5 wrong codes. No session exists until the second step.
 * - `sessions.second_factor_at`: when the session last proved a second factor (turning 2FA off needs a fresh one);
 *   sessions may now start with a password and a second factor, or with a passkey alone.
 * - `workspaces.two_factor_required`: the owners ask every member for two-factor sign-in.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('totp_factors', (t) => {
    t.uuid('user_id').primary().references('id').inTable('users').onDelete('CASCADE');
    t.text('secret_ciphertext').notNullable();
    t.bigInteger('last_used_step');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('confirmed_at', { useTz: true });
  });
  await knex.schema.createTable('recovery_codes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('code_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('used_at', { useTz: true });
    t.unique(['user_id', 'code_hash']);
  });
  await knex.raw(`alter table recovery_codes add constraint recovery_codes_hash_valid check (code_hash ~ '^[0-9a-f]{64}$')`);
  await knex.schema.createTable('passkeys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('credential_key').notNullable().unique();
    t.binary('public_key').notNullable();
    t.bigInteger('sign_count').notNullable().defaultTo(0);
    t.specificType('transports', 'text[]').notNullable().defaultTo('{}');
    t.boolean('backed_up').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.index(['user_id', 'created_at'], 'passkeys_user_id_created_at');
  });
  await knex.schema.createTable('webauthn_challenges', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // null: a password-less sign-in, whose person is not known until the passkey answers
    t.uuid('user_id').references('id').inTable('users').onDelete('CASCADE');
    t.text('purpose').notNullable();
    t.text('challenge').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
  });
  await knex.raw(`alter table webauthn_challenges add constraint webauthn_challenges_purpose_valid check (purpose in ('registration', 'authentication'))`);
  await knex.schema.createTable('pending_sign_ins', (t) => {
    t.text('id').primary();
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('user_agent');
    t.text('ip_address');
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['user_id'], 'pending_sign_ins_user_id');
  });
  await knex.raw(`alter table pending_sign_ins add constraint pending_sign_ins_id_valid check (id ~ '^[0-9a-f]{64}$')`);
  await knex.schema.alterTable('sessions', (t) => {
    t.timestamp('second_factor_at', { useTz: true });
  });
  await knex.raw('alter table sessions drop constraint sessions_authenticated_with_valid');
  await knex.raw(
    `alter table sessions add constraint sessions_authenticated_with_valid check (authenticated_with in ('password', 'sign_up', 'password_reset', 'two_factor', 'passkey'))`,
  );
  await knex.schema.alterTable('workspaces', (t) => {
    t.boolean('two_factor_required').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('two_factor_required');
  });
  await knex.raw('alter table sessions drop constraint sessions_authenticated_with_valid');
  await knex('sessions').whereIn('authenticated_with', ['two_factor', 'passkey']).update({ authenticated_with: 'password' });
  await knex.raw(`alter table sessions add constraint sessions_authenticated_with_valid check (authenticated_with in ('password', 'sign_up', 'password_reset'))`);
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('second_factor_at');
  });
  await knex.schema.dropTable('pending_sign_ins');
  await knex.schema.dropTable('webauthn_challenges');
  await knex.schema.dropTable('passkeys');
  await knex.schema.dropTable('recovery_codes');
  await knex.schema.dropTable('totp_factors');
}
