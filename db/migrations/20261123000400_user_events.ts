import type { Knex } from 'knex';

/**
 * The realtime channel's short memory (services/platform/events.ts): every published event is a row here, written in the
 * transaction of the change it announces, so a browser that reconnects with Last-Event-ID is sent what it missed.
 * Rows are pruned after an hour; the live delivery itself goes through NOTIFY, never through reads of this table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_events', (t) => {
    t.bigIncrements('id').primary();
    // an account's deletion takes its events with it
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'id'], 'user_events_user_id_id');
    t.index(['created_at'], 'user_events_created_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('user_events');
}
