import knexFactory, { Knex } from 'knex';
import path from 'node:path';
import { Model } from 'objection';

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

export function knexConfig(databaseUrl: string, pool = { min: 0, max: 10 }): Knex.Config {
  return {
    client: 'pg',
    connection: databaseUrl,
    pool,
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], tableName: 'knex_migrations' },
  };
}

/** Opens a knex pool and binds objection models to it. */
export function connectDatabase(databaseUrl: string, pool?: { min: number; max: number }): Knex {
  const knex = knexFactory(knexConfig(databaseUrl, pool));
  Model.knex(knex);
  return knex;
}
