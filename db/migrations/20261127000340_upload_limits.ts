import type { Knex } from 'knex';

/**
 * Per-account limits on what uploads may hold (services/content/uploadLimits.ts):
 * - resumable_uploads: a cancelled (tus DELETE) upload leaves the count of unfinished ones at once ('cancelled'), and
 *   the count and declared bytes of a user's unfinished uploads are read from a partial index on them;
 * - draft_uploads: every Enhance Renders draft upload from before its bytes are stored (its slot is taken first),
 *   so a draft's images and waiting references and an account's uploads not yet used are counted from the table.
 *   add-images (an image) or a dispatch that uses it (a reference) marks it registered; a sweep removes the
 *   unregistered ones older than DRAFT_UPLOAD_MAX_AGE_MINUTES, row and stored object. `path` is set once the
 *   content has been typed (the extension comes from the bytes) and before the object is written.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table resumable_uploads drop constraint resumable_uploads_status');
  await knex.raw("alter table resumable_uploads add constraint resumable_uploads_status check (status in ('uploading', 'completed', 'failed', 'expired', 'cancelled'))");
  await knex.raw("create index resumable_uploads_unfinished on resumable_uploads (user_id, created_at) where status = 'uploading'");

  await knex.schema.createTable('draft_uploads', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('draft_id').notNullable().references('drafts.id').onDelete('CASCADE');
    t.text('purpose').notNullable();
    t.text('bucket').notNullable();
    t.text('path');
    t.bigInteger('size');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('stored_at', { useTz: true });
    t.timestamp('registered_at', { useTz: true });
    t.check("purpose in ('image', 'reference')", [], 'draft_uploads_purpose');
    t.unique(['bucket', 'path'], { indexName: 'draft_uploads_object' });
  });
  await knex.raw('create index draft_uploads_waiting_by_draft on draft_uploads (draft_id, purpose) where registered_at is null');
  await knex.raw('create index draft_uploads_waiting_by_user on draft_uploads (user_id) where registered_at is null');
  await knex.raw('create index draft_uploads_waiting_since on draft_uploads (created_at) where registered_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('draft_uploads');
  await knex.raw('drop index if exists resumable_uploads_unfinished');
  await knex.raw("update resumable_uploads set status = 'expired' where status = 'cancelled'");
  await knex.raw('alter table resumable_uploads drop constraint resumable_uploads_status');
  await knex.raw("alter table resumable_uploads add constraint resumable_uploads_status check (status in ('uploading', 'completed', 'failed', 'expired'))");
}
