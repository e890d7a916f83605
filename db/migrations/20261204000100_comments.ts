import type { Knex } from 'knex';

/**
 * Comments on items (issue 42, DESIGN.md "Review"). A thread is about one item of a workspace, named by kind and id
 * like content_lineage (a pending item is its pending_approvals row, kind 'approval'; approval moves its threads to
 * the saved item), carries the optional pin and the resolved state, and holds the comments, the opening one first.
 *
 * No foreign key can name the item (its table depends on the kind), so each item table's delete trigger removes the
 * item's threads: they go with the item whichever path deletes it (the library's Delete, a project's or a
 * workspace's deletion cascading to its items). Comments go with their thread. A member who leaves keeps their
 * comments (the text belongs to the workspace's history); an account deleted leaves them without an author.
 */
const ITEM_TABLES: ReadonlyArray<[table: string, kind: string]> = [
  ['renders', 'render'],
  ['images', 'image'],
  ['clips', 'clip'],
  ['compiled_videos', 'compiled_video'],
  ['generated_content', 'generated'],
  ['pending_approvals', 'approval'],
];

const OLD_SCOPES = ['read', 'generate', 'approve', 'billing:read'];
const NEW_SCOPES = [...OLD_SCOPES, 'comment'];

function scopesCheck(scopes: readonly string[]): string {
  return `alter table access_tokens add constraint access_tokens_scopes_valid check (cardinality(scopes) > 0 and scopes <@ array[${scopes.map((s) => `'${s}'`).join(', ')}]::text[])`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('comment_threads', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('item_kind').notNullable();
    t.uuid('item_id').notNullable();
    // { x, y } or { x, y, w, h } in fractions of the picture, and/or { t } in seconds (domain/comments.ts)
    t.jsonb('pin');
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.timestamp('resolved_at', { useTz: true });
    t.uuid('resolved_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['item_kind', 'item_id', 'created_at'], 'comment_threads_item');
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(
    `alter table comment_threads add constraint comment_threads_item_kind check (item_kind in (${ITEM_TABLES.map(([, kind]) => `'${kind}'`).join(', ')}))`,
  );
  await knex.raw(`alter table comment_threads add constraint comment_threads_pin_object check (pin is null or jsonb_typeof(pin) = 'object')`);

  await knex.schema.createTable('comments', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('thread_id').notNullable().references('comment_threads.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.text('body').notNullable();
    // the members the text mentions, with the name it used: [{ userId, name }]
    t.jsonb('mentions').notNullable().defaultTo('[]');
    t.timestamp('edited_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['thread_id', 'created_at']);
    t.index(['workspace_id', 'created_at']);
    t.index(['created_by']);
  });
  await knex.raw(`alter table comments add constraint comments_body_length check (char_length(btrim(body)) between 1 and 5000)`);

  await knex.raw(`
    create or replace function rs_item_comments_removed() returns trigger language plpgsql as $$
    begin
      delete from comment_threads t using removed_items r where t.item_kind = tg_argv[0] and t.item_id = r.id;
      return null;
    end $$`);
  for (const [table, kind] of ITEM_TABLES) {
    await knex.raw(
      `create trigger ${table}_comments_removed after delete on ${table} referencing old table as removed_items for each statement execute function rs_item_comments_removed('${kind}')`,
    );
  }

  await knex.raw('alter table access_tokens drop constraint access_tokens_scopes_valid');
  await knex.raw(scopesCheck(NEW_SCOPES));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update access_tokens set scopes = array_remove(scopes, 'comment') where 'comment' = any(scopes)`);
  // a token whose only scope was 'comment' cannot exist under the old rule
  await knex.raw(`delete from access_tokens where cardinality(scopes) = 0`);
  await knex.raw('alter table access_tokens drop constraint access_tokens_scopes_valid');
  await knex.raw(scopesCheck(OLD_SCOPES));
  for (const [table] of ITEM_TABLES) await knex.raw(`drop trigger if exists ${table}_comments_removed on ${table}`);
  await knex.raw('drop function if exists rs_item_comments_removed()');
  await knex.schema.dropTable('comments');
  await knex.schema.dropTable('comment_threads');
}
