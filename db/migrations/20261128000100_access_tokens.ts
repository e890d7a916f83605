import type { Knex } from 'knex';

/**
 * Personal access tokens (DESIGN.md "Integrations (tokens and webhooks)"). Only the sha256 of a token is kept
 * (`token_hash`); `prefix` is its first characters, shown in lists so a user tells their tokens apart. A token goes
 * with its user. Revoking keeps the row (revoked_at) so the list can say when; the per-user index serves that list
 * and the count of a user's active tokens.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('access_tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('prefix').notNullable();
    t.text('token_hash').notNullable().unique();
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('last_used_at', { useTz: true });
    t.text('last_used_ip');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.index(['user_id', 'created_at'], 'access_tokens_user_id_created_at');
  });
  await knex.raw(`alter table access_tokens add constraint access_tokens_name_valid check (length(btrim(name)) between 1 and 100)`);
  await knex.raw(
    `alter table access_tokens add constraint access_tokens_scopes_valid check (cardinality(scopes) > 0 and scopes <@ array['read', 'generate', 'approve', 'billing:read']::text[])`,
  );
  await knex.raw(`alter table access_tokens add constraint access_tokens_hash_valid check (token_hash ~ '^[0-9a-f]{64}$')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('access_tokens');
}
