import type { Knex } from 'knex';

/** Sign-in attempt counters shared by every API process (rate-limiter-flexible's Postgres store layout). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('auth_rate_limits', (t) => {
    t.string('key', 255).primary();
    t.integer('points').notNullable().defaultTo(0);
    t.bigInteger('expire');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('auth_rate_limits');
}
