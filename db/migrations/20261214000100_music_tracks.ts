import type { Knex } from 'knex';

/**
 * A workspace's music tracks (issue 44 item 3, DESIGN.md "Brand kit and video"): the original audio file in the
 * videos bucket under music/<workspaceId>/, and what probing it found. An assembly's editing config names one by id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('music_tracks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('format').notNullable();
    t.text('mime').notNullable();
    t.double('duration_seconds').notNullable();
    t.bigInteger('size_bytes').notNullable();
    t.integer('channels').notNullable();
    t.integer('sample_rate').notNullable();
    t.text('storage_bucket').notNullable();
    t.text('storage_path').notNullable().unique();
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at'], 'music_tracks_workspace_created_idx');
    t.index(['created_by'], 'music_tracks_created_by_idx');
  });
  await knex.raw(`alter table music_tracks add constraint music_tracks_format check (format in ('mp3', 'wav', 'm4a', 'aac', 'flac'))`);
  await knex.raw(`alter table music_tracks add constraint music_tracks_limits check (duration_seconds > 0 and duration_seconds <= 601 and size_bytes > 0 and size_bytes <= 20971520)`);
  await knex.raw(`alter table music_tracks add constraint music_tracks_name check (name <> '' and char_length(name) <= 100)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('music_tracks');
}
