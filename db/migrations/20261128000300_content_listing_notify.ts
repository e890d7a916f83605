import type { Knex } from 'knex';

/**
 * Any insert, update or delete of a row the content library lists (renders, AI images, clips, compiled videos,
 * generated content) sends NOTIFY rs_content_changed '<project id>' on commit (both projects when a row moves); a
 * TRUNCATE sends '*'. API processes keep each project's listing and first pages in memory for a few seconds
 * (services/content/library.ts) and drop them on that note, so an upload, an approval saved by a worker, a rename or
 * a removal made through any process or code path is listed at once by every API. PostgreSQL sends one note per
 * distinct payload per transaction, so a batch of rows into one project is one note.
 */
const CONTENT_TABLES = ['renders', 'images', 'clips', 'compiled_videos', 'generated_content'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function rs_content_changed() returns trigger language plpgsql as $$
    begin
      if TG_LEVEL = 'STATEMENT' then
        perform pg_notify('rs_content_changed', '*');
        return null;
      end if;
      if TG_OP <> 'INSERT' then perform pg_notify('rs_content_changed', OLD.project_id::text); end if;
      if TG_OP <> 'DELETE' then perform pg_notify('rs_content_changed', NEW.project_id::text); end if;
      return null;
    end $$;
  `);
  for (const table of CONTENT_TABLES) {
    await knex.raw(`create trigger ${table}_content_changed after insert or update or delete on ${table} for each row execute function rs_content_changed()`);
    await knex.raw(`create trigger ${table}_content_truncated after truncate on ${table} for each statement execute function rs_content_changed()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of CONTENT_TABLES) {
    await knex.raw(`drop trigger if exists ${table}_content_truncated on ${table}`);
    await knex.raw(`drop trigger if exists ${table}_content_changed on ${table}`);
  }
  await knex.raw('drop function if exists rs_content_changed()');
}
