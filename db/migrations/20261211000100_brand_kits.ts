import type { Knex } from 'knex';

/**
 * A workspace's brand kit (issue 44, DESIGN.md "Brand kit and video"): colours, font, end-card contact lines and call
 * to action, and the logo's storage key (a PNG in the images bucket under brand/<workspaceId>/). One row per
 * workspace at most; a workspace without one uses the default kit (domain/brandKit.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('brand_kits', (t) => {
    t.uuid('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.text('primary_color').notNullable();
    t.text('secondary_color').notNullable();
    t.text('font').notNullable();
    t.text('company').notNullable().defaultTo('');
    t.text('phone').notNullable().defaultTo('');
    t.text('website').notNullable().defaultTo('');
    t.text('call_to_action').notNullable().defaultTo('');
    t.text('logo_key');
    t.integer('logo_width');
    t.integer('logo_height');
    t.uuid('updated_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table brand_kits add constraint brand_kits_colors_hex check (primary_color ~ '^#[0-9A-Fa-f]{6}$' and secondary_color ~ '^#[0-9A-Fa-f]{6}$')`);
  await knex.raw(`alter table brand_kits add constraint brand_kits_font_set check (font <> '')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('brand_kits');
}
