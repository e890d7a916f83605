/**
 * Databases of a test file's own on the run's PostgreSQL server, beside the run's shared one (globalSetup): the
 * migration test migrates one step by step, the access-matrix test compares whole tables before and after each
 * refused call, which only means something when no other test file writes to the same database meanwhile, and the
 * scale-out test's API processes keep their LISTEN connections out of the way of other files' cache tests.
 */
import knexFactory, { type Knex } from 'knex';
import { knexConfig } from '../../db/connection';

/** The run's server with the maintenance database `postgres` (DATABASE_URL names the run's own database). */
export function adminDatabaseUrl(): string {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://invalid');
  url.pathname = '/postgres';
  return url.toString();
}

export interface ScratchDatabase {
  name: string;
  url: string;
  /** A plain pool on it (no breakers, no statement timeout) with the app's migrations configured. */
  knex: Knex;
  /** Closes the pool and drops the database. */
  drop: () => Promise<void>;
}

/**
 * Creates `rs_<label>_<time>_<pid>`: empty (migrate it with `knex.migrate`), or with `{ migrated: true }` a copy of the
 * run's migrated template (globalSetup's TEST_TEMPLATE_DATABASE; `knex.migrate.latest()` then has nothing to do).
 */
export async function createScratchDatabase(label: string, options: { migrated?: boolean } = {}): Promise<ScratchDatabase> {
  const name = `rs_${label}_${Date.now()}_${process.pid}`;
  const template = options.migrated ? process.env.TEST_TEMPLATE_DATABASE : undefined;
  const admin = knexFactory({ client: 'pg', connection: adminDatabaseUrl(), pool: { min: 0, max: 1 } });
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await admin.raw(template ? `create database "${name}" template "${template}"` : `create database "${name}"`);
        // as the run's database (tests/setup/globalSetup.ts): a commit does not wait for the disk
        await admin.raw(`alter database "${name}" set synchronous_commit = off`);
        break;
      } catch (err) {
        // a template is copied only while nobody is connected to it: another file's copy (or autovacuum) is a moment
        if (!template || attempt >= 40 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await admin.destroy();
  }
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  // knex prints a refused migration itself; the tests assert on the error they get
  const quiet = { warn() {}, error() {}, deprecate() {}, debug() {} };
  const knex = knexFactory({ ...knexConfig(url.toString(), { min: 0, max: 4 }, { queryTimeoutMs: 0 }), log: quiet });
  return {
    name,
    url: url.toString(),
    knex,
    drop: async () => {
      await knex.destroy();
      const dropper = knexFactory({ client: 'pg', connection: adminDatabaseUrl(), pool: { min: 0, max: 1 } });
      try {
        await dropper.raw(`drop database if exists "${name}" with (force)`);
      } finally {
        await dropper.destroy();
      }
    },
  };
}

/** Applies migrations one at a time up to, not including, `before` (a migration's file name without extension). */
export async function migrateUpTo(knex: Knex, before: string): Promise<string[]> {
  const applied: string[] = [];
  for (;;) {
    const [, pending] = (await knex.migrate.list()) as [unknown[], Array<{ file: string }>];
    const next = pending[0]?.file;
    if (!next) throw new Error(`migrateUpTo: no migration named ${before} is pending`);
    if (next.replace(/\.[jt]s$/, '') === before) return applied;
    await knex.migrate.up();
    applied.push(next);
  }
}

/** Every table of the public schema but knex's own, sorted. */
export async function tableNames(knex: Knex): Promise<string[]> {
  const rows = await knex('pg_tables').where({ schemaname: 'public' }).whereNot('tablename', 'like', 'knex_%').orderBy('tablename').select<{ tablename: string }[]>('tablename');
  return rows.map((r) => r.tablename);
}
