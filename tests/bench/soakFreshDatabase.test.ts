/**
 * Each soak run starts from an empty database wherever PostgreSQL's data lives (bench/soak/topology.ts): from a clone in
 * a mode-700 folder the cluster sits outside .data/soak and survives its wipe, and a second run once inherited the first
 * run's rows (the checker then reported 1,283 rows without an object). The soak's database is dropped and created anew,
 * even while a connection from an earlier run is still open.
 */
import knexFactory from 'knex';
import { freshDatabase } from '../../bench/soak/topology';
import { adminDatabaseUrl } from '../support/scratchDatabase';

const serverUrl = (() => {
  const url = new URL(adminDatabaseUrl());
  url.pathname = '';
  return url.toString().replace(/\/$/, '');
})();

it('drops the soak database with its rows and open connections and creates it empty', async () => {
  const name = `rs_soakfresh_${Date.now()}_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: adminDatabaseUrl(), pool: { min: 0, max: 1 } });
  // an earlier run's database: a table with rows, and a connection still open to it
  await admin.raw(`create database "${name}"`);
  const earlier = knexFactory({ client: 'pg', connection: `${serverUrl}/${name}`, pool: { min: 1, max: 1 } });
  try {
    await earlier.raw('create table leftovers (id int)');
    await earlier.raw('insert into leftovers values (1), (2)');

    await freshDatabase(serverUrl, name);

    const fresh = knexFactory({ client: 'pg', connection: `${serverUrl}/${name}`, pool: { min: 0, max: 1 } });
    try {
      const tables = await fresh('pg_tables').where({ schemaname: 'public' }).pluck('tablename');
      expect(tables).toEqual([]);
    } finally {
      await fresh.destroy();
    }
    // and a database that is not there yet is simply created
    await admin.raw(`drop database "${name}"`);
    await freshDatabase(serverUrl, name);
    expect(await admin('pg_database').where({ datname: name }).pluck('datname')).toEqual([name]);
  } finally {
    await earlier.destroy().catch(() => undefined);
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
});
