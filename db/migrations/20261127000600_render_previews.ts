import type { Knex } from 'knex';

/**
 * renders.preview_path: the render's preview, a webp of at most 2048 px each way kept beside the original in the same
 * bucket (`previews/<path without extension>.webp`, services/content/renderThumbnails.ts). The library's item dialog
 * shows it instead of the original (which may be 150 MB); null until it is made (with the thumbnail: in the upload
 * request for small files, by the worker for large ones, by the storage maintenance for renders stored before it).
 * The partial index keeps the maintenance run's look-up of renders still without one small once they all have it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('renders', (t) => {
    t.text('preview_path');
  });
  await knex.raw('create index renders_without_preview on renders (created_at) where preview_path is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists renders_without_preview');
  await knex.schema.alterTable('renders', (t) => {
    t.dropColumn('preview_path');
  });
}
