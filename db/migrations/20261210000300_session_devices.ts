import type { Knex } from 'knex';

/**
 * What Account → Security shows of a session: a public handle (the id is the token's hash and never leaves the
 * server), the browser's user agent and address when it signed in, when it was last seen (updated at most once a
 * minute) and how it signed in. `last_seen_at` changes often, so the rs_auth_changed trigger now fires only on the
 * changes that alter what a token stands for (its user, its expiry, its deletion), not on every request's touch.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.uuid('handle').notNullable().defaultTo(knex.raw('gen_random_uuid()')).unique();
    t.text('user_agent');
    t.text('ip_address');
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('authenticated_with').notNullable().defaultTo('password');
  });
  await knex.raw(`alter table sessions add constraint sessions_authenticated_with_valid check (authenticated_with in ('password', 'sign_up', 'password_reset'))`);
  await knex.raw('drop trigger if exists sessions_auth_changed on sessions');
  await knex.raw(`create trigger sessions_auth_changed after update of user_id, expires_at or delete on sessions for each row execute function rs_auth_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists sessions_auth_changed on sessions');
  await knex.raw(`create trigger sessions_auth_changed after update or delete on sessions for each row execute function rs_auth_changed()`);
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('authenticated_with');
    t.dropColumn('last_seen_at');
    t.dropColumn('ip_address');
    t.dropColumn('user_agent');
    t.dropColumn('handle');
  });
}
