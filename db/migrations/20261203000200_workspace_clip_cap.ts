import type { Knex } from 'knex';

/**
 * A workspace's optional cap on its clips in flight (pending or processing, every member's together). The specs'
 * one clip at a time is per person (services/generation/clipAdmission.ts); a team that wants to pace its spending
 * sets this. Null: no cap beyond the credits.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.integer('max_clips_in_flight');
  });
  await knex.raw('alter table workspaces add constraint workspaces_max_clips_in_flight_range check (max_clips_in_flight between 1 and 100)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table workspaces drop constraint workspaces_max_clips_in_flight_range');
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('max_clips_in_flight');
  });
}
