import type { Knex } from 'knex';

/**
 * Single sign-on set up by a workspace's admins (services/workspaces/workspaceSingleSignOn.ts):
 * - `workspace_sso_providers`: one OpenID provider per workspace: issuer, client id, the client secret kept encrypted
 *   (AES-256-GCM, never answered after it is set), the name on the sign-in button, and whether its domains must
 *   sign in through it.
 * - `workspace_sso_domains`: the e-mail domains whose addresses sign in through that provider; a domain belongs to
 *   one workspace only.
 * - `sso_sign_in_attempts.workspace_id`: which workspace's provider a sign-in was started for (null: the
 *   installation's), so the callback finishes it with the same provider.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspace_sso_providers', (t) => {
    t.uuid('workspace_id').primary().references('id').inTable('workspaces').onDelete('CASCADE');
    t.text('issuer_url').notNullable();
    t.text('client_id').notNullable();
    t.text('client_secret_ciphertext').notNullable();
    t.text('display_name').notNullable();
    t.boolean('sso_required').notNullable().defaultTo(false);
    t.uuid('updated_by_user_id').references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('workspace_sso_domains', (t) => {
    t.text('domain').primary();
    t.uuid('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });
  await knex.raw(`alter table workspace_sso_domains add constraint workspace_sso_domains_lower check (domain = lower(domain))`);
  await knex.schema.alterTable('sso_sign_in_attempts', (t) => {
    t.uuid('workspace_id').references('id').inTable('workspaces').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('sso_sign_in_attempts').whereNotNull('workspace_id').delete();
  await knex.schema.alterTable('sso_sign_in_attempts', (t) => {
    t.dropColumn('workspace_id');
  });
  await knex.schema.dropTable('workspace_sso_domains');
  await knex.schema.dropTable('workspace_sso_providers');
}
