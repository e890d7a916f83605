import type { Knex } from 'knex';

/**
 * Single sign-on with OpenID Connect (services/accounts/singleSignOn.ts).
 * - `user_identities`: which account a provider's person (issuer + subject) signs in to, remembered at the first
 *   sign-in so later ones need no e-mail match.
 * - `sso_sign_in_attempts`: one per "Sign in with ..." click: the PKCE verifier and nonce kept server-side under the
 *   state's hash, short-lived and used once (a replayed callback finds it used).
 * - sessions may now say they were opened through single sign-on.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_identities', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('issuer').notNullable();
    t.text('subject').notNullable();
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('email').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_sign_in_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['issuer', 'subject']);
    t.index(['user_id']);
  });
  await knex.schema.createTable('sso_sign_in_attempts', (t) => {
    // sha256 of the state sent to the provider: the state itself is only in the browser's cookie and the URL
    t.text('state_hash').primary();
    t.text('issuer').notNullable();
    t.text('code_verifier').notNullable();
    t.text('nonce').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['expires_at']);
  });
  await knex.raw('alter table sessions drop constraint sessions_authenticated_with_valid');
  await knex.raw(
    `alter table sessions add constraint sessions_authenticated_with_valid check (authenticated_with in ('password', 'sign_up', 'password_reset', 'two_factor', 'passkey', 'single_sign_on'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex('sessions').where('authenticated_with', 'single_sign_on').delete();
  await knex.raw('alter table sessions drop constraint sessions_authenticated_with_valid');
  await knex.raw(`alter table sessions add constraint sessions_authenticated_with_valid check (authenticated_with in ('password', 'sign_up', 'password_reset', 'two_factor', 'passkey'))`);
  await knex.schema.dropTable('sso_sign_in_attempts');
  await knex.schema.dropTable('user_identities');
}
