import type { Knex } from 'knex';

/**
 * A project's removal (deleted on its own, with its user by cascade, or by a TRUNCATE: '*') or a change of its id or
 * owner sends NOTIFY rs_projects_changed '<project id>' on commit. API processes keep each project's owner in memory
 * (services/content/projectOwnerCache.ts) for the ownership check of every content listing, and drop it on that note, so a
 * project deleted or handed over by any process or code path (the API, a worker, the admin CLI, plain SQL) is refused
 * at once. Inserts need no note: an unknown project is never kept.
 */
export async function up(knex: Knex): Promise<void> {
  // a row trigger names the project; the statement trigger (TRUNCATE) has no row, so every entry goes
  await knex.raw(`
    create or replace function rs_projects_changed() returns trigger language plpgsql as $$
    declare project text := '*';
    begin
      if TG_LEVEL = 'ROW' then project := OLD.id::text; end if;
      perform pg_notify('rs_projects_changed', project);
      return null;
    end $$;
  `);
  await knex.raw(`create trigger projects_owner_changed after delete or update of id, user_id on projects for each row execute function rs_projects_changed()`);
  await knex.raw(`create trigger projects_owner_truncated after truncate on projects for each statement execute function rs_projects_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists projects_owner_truncated on projects');
  await knex.raw('drop trigger if exists projects_owner_changed on projects');
  await knex.raw('drop function if exists rs_projects_changed()');
}
