import type { Knex } from 'knex';

/**
 * Indexes found missing by the cost-of-growth bench (bench/growth.ts; docs/growth.md). Purely additive.
 *
 * 1. The Activity list (services/generation/jobs.ts clipJobs) reads a user's newest clip jobs: `where user_id = ?
 *    order by created_at desc limit 50`. video_generation_jobs had only (user_id, status), so PostgreSQL read every
 *    clip job of the user and sorted them all for the 50 newest (100,000 rows read at 100k jobs). With (user_id,
 *    created_at) it walks the index backwards and stops after 50, as ai_image_edits, assembly_jobs and draft_jobs do.
 * 2. Foreign keys to renders, images and assembly jobs had no index on the referencing side, so deleting one render
 *    (with its project or its account) ran `update ... set render_id = null where render_id = $1` as a scan of the
 *    whole referencing table, once per deleted row: removing a project of N renders cost N scans of every user's clip
 *    jobs (the bench's clean-up of 100k renders beside 100k clip jobs hit the 15 s statement timeout). Partial on
 *    `is not null`: the actions' equality implies it, and rows without a source stay out of the index.
 */
const REFERENCES: Array<[table: string, column: string]> = [
  ['video_generation_jobs', 'render_id'],
  ['video_generation_jobs', 'image_id'],
  ['clips', 'render_id'],
  ['clips', 'image_id'],
  ['generated_content', 'render_id'],
  ['resumable_uploads', 'render_id'],
  ['compiled_videos', 'assembly_job_id'],
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists video_generation_jobs_user_id_created_at_index on video_generation_jobs (user_id, created_at)');
  for (const [table, column] of REFERENCES) {
    await knex.raw(`create index if not exists ${table}_${column}_reference on ${table} (${column}) where ${column} is not null`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, column] of [...REFERENCES].reverse()) await knex.raw(`drop index if exists ${table}_${column}_reference`);
  await knex.raw('drop index if exists video_generation_jobs_user_id_created_at_index');
}
