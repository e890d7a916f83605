import type { Knex } from 'knex';

/**
 * A membership's removal or role change (its own delete or update, a cascade from its workspace or user, a TRUNCATE:
 * '*') sends NOTIFY rs_members_changed '<workspace id>:<user id>' on commit. API processes keep each (workspace,
 * user) role in memory (services/workspaces/membershipCache.ts) for the access check every request makes, and drop
 * it on that note, so a removed member or a lowered role is refused at once, whichever process made the change.
 * Inserts need no note: "not a member" is never kept.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function rs_members_changed() returns trigger language plpgsql as $$
    declare member text := '*';
    begin
      if TG_LEVEL = 'ROW' then member := OLD.workspace_id::text || ':' || OLD.user_id::text; end if;
      perform pg_notify('rs_members_changed', member);
      return null;
    end $$;
  `);
  await knex.raw(
    `create trigger workspace_members_changed after delete or update on workspace_members for each row execute function rs_members_changed()`,
  );
  await knex.raw(
    `create trigger workspace_members_truncated after truncate on workspace_members for each statement execute function rs_members_changed()`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists workspace_members_truncated on workspace_members');
  await knex.raw('drop trigger if exists workspace_members_changed on workspace_members');
  await knex.raw('drop function if exists rs_members_changed()');
}
