import type { Knex } from 'knex';

/**
 * One version chain from render to video (issue 14): each row says that an item was made from a source item, in which
 * position (a compiled video has several clips) and by which workflow run. An edge table rather than columns on each
 * content table because a compiled video has several sources; no foreign keys to the items, so deleting one never
 * breaks another's chain (the chain shows it as deleted). The user's rows go with the account.
 *
 * Kinds: render, image (AI image, upscale), clip, compiled_video, generated (generated_content), draft_image.
 * Backfilled from what earlier rows say: clips.render_id / image_id, images.base_image_url, compiled_videos.clip_ids,
 * with the generating workflow taken from the item's approval where one is recorded.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('content_lineage', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('item_kind').notNullable();
    t.uuid('item_id').notNullable();
    t.text('source_kind').notNullable();
    t.uuid('source_id').notNullable();
    t.integer('position').notNullable().defaultTo(0);
    t.text('workflow_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['item_kind', 'item_id', 'source_kind', 'source_id'], { indexName: 'content_lineage_edge' });
    t.index(['source_kind', 'source_id'], 'content_lineage_source');
    t.index(['user_id']);
  });
  const kinds = "('render', 'image', 'clip', 'compiled_video', 'generated', 'draft_image')";
  await knex.raw(`alter table content_lineage add constraint content_lineage_kinds check (item_kind in ${kinds} and source_kind in ${kinds})`);
  await backfillLineage(knex);
}

/**
 * Edges for items saved before the chain was recorded, from what their rows say (idempotent). Runs on the schema of
 * this migration (owning column `user_id`) and on the current one (`workspace_id`, 20261201000100), where operators and
 * tests run it again.
 */
export async function backfillLineage(knex: Knex): Promise<void> {
  const owner = (await knex.schema.hasColumn('content_lineage', 'workspace_id')) ? 'workspace_id' : 'user_id';
  // clips from their render or image
  await knex.raw(`
    insert into content_lineage (${owner}, item_kind, item_id, source_kind, source_id, workflow_id, created_at)
    select c.${owner}, 'clip', c.id, case when c.render_id is not null then 'render' else 'image' end, coalesce(c.render_id, c.image_id),
           (select 'clip-' || pa.source_job_id from pending_approvals pa where pa.content_id = c.id::text and pa.source_job_id is not null limit 1),
           c.created_at
    from clips c where c.render_id is not null or c.image_id is not null
    on conflict do nothing`);
  // images from the render or image whose file their base_image_url names (query string ignored)
  await knex.raw(`
    insert into content_lineage (${owner}, item_kind, item_id, source_kind, source_id, workflow_id, created_at)
    select i.${owner}, 'image', i.id, src.kind, src.id,
           (select 'image-edit-' || pa.source_job_id from pending_approvals pa where pa.content_id = i.id::text and pa.source_job_id is not null limit 1),
           i.created_at
    from images i
    join lateral (
      select 'render' as kind, r.id from renders r where r.${owner} = i.${owner} and r.file_url = split_part(i.base_image_url, '?', 1)
      union all
      select 'image', b.id from images b where b.${owner} = i.${owner} and b.id <> i.id and b.file_url = split_part(i.base_image_url, '?', 1)
      limit 1
    ) src on true
    where i.base_image_url is not null
    on conflict do nothing`);
  // compiled videos from their clips, in order
  await knex.raw(`
    insert into content_lineage (${owner}, item_kind, item_id, source_kind, source_id, position, created_at)
    select v.${owner}, 'compiled_video', v.id, 'clip', u.clip_id, u.ord - 1, v.created_at
    from compiled_videos v cross join lateral unnest(v.clip_ids) with ordinality as u(clip_id, ord)
    on conflict do nothing`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('content_lineage');
}
