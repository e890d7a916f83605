import type { Knex } from 'knex';
import { connectDatabase } from '../../db/connection';

let knex: Knex | null = null;

/**
 * One pool per jest worker on the run's throw-away database (created and migrated by globalSetup). Its statements wait
 * on locks and its breakers on calls however busy the machine is (no statement timeout, breaker calls bounded by the
 * test's own timeout): a storm of operations queued on one row lock outlasted the production 15 s under load, which
 * says nothing of what the tests check. Tests of the timeouts and breakers make pools of their own.
 */
export function testKnex(): Knex {
  if (!knex) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set: run tests through jest so globalSetup prepares the database');
    knex = connectDatabase(url, { min: 0, max: 20 }, { queryTimeoutMs: 0, breaker: { callTimeoutMs: 600_000 } });
  }
  return knex;
}

export async function closeTestKnex(): Promise<void> {
  if (knex) await knex.destroy();
  knex = null;
}
