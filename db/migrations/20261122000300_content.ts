import type { Knex } from 'knex';

/** Where a stored file lives: bucket + path behind the storage interface, plus what was stored. */
function storageColumns(t: Knex.CreateTableBuilder): void {
  t.text('storage_bucket');
  t.text('storage_path');
  t.text('storage_mime');
  t.bigInteger('storage_size');
}

function timestamps(knex: Knex, t: Knex.CreateTableBuilder): void {
  t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('projects', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('address');
    timestamps(knex, t);
    t.index(['user_id', 'created_at']);
    t.check("length(btrim(name)) > 0", [], 'projects_name_not_blank');
  });

  await knex.schema.createTable('renders', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('file_url').notNullable();
    t.text('file_name').notNullable();
    t.bigInteger('file_size').notNullable().defaultTo(0);
    t.integer('width');
    t.integer('height');
    t.text('aspect_ratio').notNullable().defaultTo('16:9');
    t.text('checksum');
    t.text('thumbnail_path');
    storageColumns(t);
    timestamps(knex, t);
    t.index(['project_id', 'created_at']);
    t.index(['user_id']);
    t.unique(['project_id', 'checksum'], { indexName: 'renders_project_checksum_unique' });
  });

  await knex.schema.createTable('images', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('file_url').notNullable();
    t.text('file_name').notNullable();
    t.bigInteger('file_size').notNullable().defaultTo(0);
    t.integer('width');
    t.integer('height');
    t.text('original_prompt');
    t.text('refined_prompt');
    t.text('base_image_url');
    t.text('format').notNullable().defaultTo('square');
    t.text('aspect_ratio');
    t.boolean('upscaled').notNullable().defaultTo(false);
    t.text('thumbnail_path');
    storageColumns(t);
    timestamps(knex, t);
    t.index(['project_id', 'created_at']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('clips', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.uuid('render_id').references('renders.id').onDelete('SET NULL');
    t.uuid('image_id').references('images.id').onDelete('SET NULL');
    t.text('file_url').notNullable();
    t.text('file_name').notNullable();
    t.decimal('duration', 8, 3);
    t.text('prompt_used');
    t.text('movement');
    t.text('camera_movement');
    t.text('style');
    t.integer('credits_used').notNullable().defaultTo(0);
    t.text('thumbnail_url');
    t.text('thumbnail_path');
    t.text('ai_description');
    t.bigInteger('file_size');
    t.jsonb('analysis_data').notNullable().defaultTo('{}');
    t.text('custom_name');
    storageColumns(t);
    timestamps(knex, t);
    t.index(['project_id', 'created_at']);
    t.index(['user_id']);
    // a clip comes from a render or an image, never both (deleting the source may leave neither)
    t.check('num_nonnulls(render_id, image_id) <= 1', [], 'clips_single_source');
  });

  await knex.schema.createTable('compiled_videos', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.text('file_url').notNullable();
    t.text('file_name').notNullable();
    t.decimal('duration', 8, 3);
    t.specificType('clip_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.jsonb('editing_data').notNullable().defaultTo('{}');
    t.text('thumbnail_path');
    storageColumns(t);
    timestamps(knex, t);
    t.index(['project_id', 'created_at']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('generated_content', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('profiles.id').onDelete('CASCADE');
    t.uuid('render_id').references('renders.id').onDelete('SET NULL');
    t.text('content_type').notNullable();
    t.text('file_url').notNullable();
    t.text('file_name').notNullable();
    t.text('prompt_style');
    t.text('ai_caption');
    t.integer('credits_used').notNullable().defaultTo(0);
    t.jsonb('generation_data').notNullable().defaultTo('{}');
    storageColumns(t);
    timestamps(knex, t);
    t.index(['project_id', 'created_at']);
    t.index(['user_id']);
    t.check("content_type in ('video', 'render', 'clip', 'image')", [], 'generated_content_type_valid');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['generated_content', 'compiled_videos', 'clips', 'images', 'renders', 'projects']) {
    await knex.schema.dropTable(table);
  }
}
