import type { Knex } from 'knex';

/**
 * The content library's order as an index on each content table: newest first by creation time to the millisecond
 * (what the listing shows and sorts by), then by id. The paged listing (GET /api/projects/:id/content?limit=&cursor=)
 * reads a page as an index range from its cursor, so a page costs `limit + 1` rows per table however big the project
 * is. In UTC because the expression must be immutable to be indexed (date_trunc on a timestamptz is not).
 */
const LISTING_ORDER_TABLES = ['renders', 'images', 'clips', 'compiled_videos', 'generated_content'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of LISTING_ORDER_TABLES) {
    await knex.raw(`create index ?? on ?? (project_id, (date_trunc('milliseconds', created_at at time zone 'UTC')) desc, id desc)`, [`${table}_listing_order`, table]);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of LISTING_ORDER_TABLES) {
    await knex.raw('drop index if exists ??', [`${table}_listing_order`]);
  }
}
