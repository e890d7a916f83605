import type { Knex } from 'knex';
import { connectDatabase } from '../../db/connection';

let knex: Knex | null = null;

/** One pool per jest worker on the run's throw-away database (created and migrated by globalSetup). */
export function testKnex(): Knex {
  if (!knex) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set: run tests through jest so globalSetup prepares the database');
    knex = connectDatabase(url, { min: 0, max: 20 });
  }
  return knex;
}

export async function closeTestKnex(): Promise<void> {
  if (knex) await knex.destroy();
  knex = null;
}
