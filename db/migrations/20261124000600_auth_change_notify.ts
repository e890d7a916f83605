import type { Knex } from 'knex';

/**
 * Every change that can alter what a session token stands for (a session ended or changed; a user's e-mail, role or
 * deletion mark changed, or the user removed; a profile's name changed) sends NOTIFY rs_auth_changed '<user id>' on
 * commit. API processes cache resolved sessions (services/accounts/sessionCache.ts) and drop a user's entries on that note, so
 * sign-out, password changes, admin grants made by the CLI and account deletion take effect at once in every process,
 * whichever code path or process wrote the change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function rs_auth_changed() returns trigger language plpgsql as $$
    declare uid text;
    begin
      if TG_TABLE_NAME = 'sessions' then
        uid := OLD.user_id::text;
      else
        uid := OLD.id::text;
      end if;
      perform pg_notify('rs_auth_changed', uid);
      return null;
    end $$;
  `);
  await knex.raw(`create trigger sessions_auth_changed after update or delete on sessions for each row execute function rs_auth_changed()`);
  await knex.raw(
    `create trigger users_auth_changed after update of email, role, deletion_requested_at or delete on users for each row execute function rs_auth_changed()`,
  );
  await knex.raw(`create trigger profiles_auth_changed after update of name or delete on profiles for each row execute function rs_auth_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists profiles_auth_changed on profiles');
  await knex.raw('drop trigger if exists users_auth_changed on users');
  await knex.raw('drop trigger if exists sessions_auth_changed on sessions');
  await knex.raw('drop function if exists rs_auth_changed()');
}
