/**
 * The id column rename (db/migrations/20261201000100_workspace_id_columns.ts): on a database of its own, seeded before
 * workspaces and migrated to the step before the rename, every account's numbers (balance, reserved credits, ledger
 * sum, active reservations, row counts per table) are the same after `up`, after `down` and after `up` again; `up`
 * points each renamed column's foreign key at `workspaces`, and `down` restores the old names and foreign keys.
 */
import type { Knex } from 'knex';
import { RENAMED_COLUMNS } from '../../db/migrations/20261201000100_workspace_id_columns';
import { ledger, numbersOf, OWNED_BY, seedUser, type AccountNumbers } from '../support/accountSeed';
import { createScratchDatabase, migrateUpTo, type ScratchDatabase } from '../support/scratchDatabase';

const WORKSPACES_MIGRATION = '20261127000700_workspaces';
const RENAME_MIGRATION = '20261201000100_workspace_id_columns';

const renamed = new Set(RENAMED_COLUMNS.map((c) => c.table));
const afterRename = (table: string): string => (renamed.has(table) ? 'workspace_id' : OWNED_BY[table]);

async function columnsOf(knex: Knex, table: string): Promise<string[]> {
  const rows = await knex('information_schema.columns').where({ table_schema: 'public', table_name: table }).pluck('column_name');
  return rows as string[];
}

/** The table each foreign key of `table.column` references. */
async function referencedBy(knex: Knex, table: string, column: string): Promise<string[]> {
  const rows = await knex.raw<{ rows: Array<{ target: string }> }>(
    `select c.confrelid::regclass::text as target
       from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
      where c.contype = 'f' and c.conrelid = ?::regclass and a.attname = ?`,
    [table, column],
  );
  return rows.rows.map((r) => r.target).sort();
}

let db: ScratchDatabase;
let accounts: string[] = [];
let before: Record<string, AccountNumbers> = {};

async function numbersNow(columnOf: (table: string) => string): Promise<Record<string, AccountNumbers>> {
  const numbers: Record<string, AccountNumbers> = {};
  for (const id of accounts) numbers[id] = await numbersOf(db.knex, id, columnOf);
  return numbers;
}

beforeAll(async () => {
  db = await createScratchDatabase('idrename');
  await migrateUpTo(db.knex, WORKSPACES_MIGRATION);
  accounts = [];
  for (let n = 0; n < 3; n++) accounts.push(await seedUser(db.knex, n, n + 1));
  const [{ id: bare }] = await db.knex('users').insert({ email: `bare-${Date.now()}@example.test`, password_hash: 'x' }).returning('id');
  await db.knex('profiles').insert({ id: bare, email: `bare-${bare}@example.test` });
  await ledger(db.knex, bare, 5, 'signup_bonus');
  accounts.push(bare);
  await migrateUpTo(db.knex, RENAME_MIGRATION);
  // a refund record naming its account, which has no foreign key
  await db.knex('stripe_refunds').insert({ stripe_event_id: 'evt_rename', stripe_session_id: 'cs_rename', payment_intent_id: 'pi_rename', user_id: accounts[0], amount_cents: 900, currency: 'nzd', status: 'refunded', reason: 'account_deleted' });
  before = await numbersNow((table) => OWNED_BY[table]);
}, 180_000);

afterAll(async () => {
  await db?.drop();
});

describe('the id column rename', () => {
  it('up renames every owning-account column to workspace_id, keeping every number', async () => {
    const [, applied] = await db.knex.migrate.up();
    expect(applied).toEqual([`${RENAME_MIGRATION}.ts`]);
    for (const { table, from } of RENAMED_COLUMNS) {
      const columns = await columnsOf(db.knex, table);
      expect({ table, columns: columns.filter((c) => c === from || c === 'workspace_id') }).toEqual({ table, columns: ['workspace_id'] });
    }
    expect(await numbersNow(afterRename)).toEqual(before);
    expect(await db.knex('stripe_refunds').where({ stripe_event_id: 'evt_rename' }).first('workspace_id')).toEqual({ workspace_id: accounts[0] });
  });

  it('points each renamed column at workspaces, and names indexes and keys after the new column', async () => {
    for (const { table, referenced } of RENAMED_COLUMNS) {
      expect({ table, targets: await referencedBy(db.knex, table, 'workspace_id') }).toEqual({ table, targets: referenced ? ['workspaces'] : [] });
    }
    const stale = await db.knex.raw<{ rows: Array<{ name: string }> }>(
      `select indexname as name from pg_indexes where schemaname = 'public' and tablename = any (?) and indexname ~ '(user_id|profile_id|_by_user|_user_sequence)'`,
      [[...renamed]],
    );
    expect(stale.rows).toEqual([]);
    // deleting a workspace still takes its rows with it
    const gone = accounts[accounts.length - 1];
    await db.knex('workspaces').where({ id: gone }).delete();
    expect(await db.knex('credit_transactions').where({ workspace_id: gone }).count<{ n: string }>('* as n').first()).toEqual({ n: '0' });
    accounts = accounts.slice(0, -1);
    delete before[gone];
  });

  it('down restores the old names and foreign keys with the same numbers, and up again keeps them', async () => {
    const [, undone] = await db.knex.migrate.down();
    expect(undone).toEqual([`${RENAME_MIGRATION}.ts`]);
    for (const { table, from, referenced } of RENAMED_COLUMNS) {
      expect({ table, columns: (await columnsOf(db.knex, table)).filter((c) => c === from || c === 'workspace_id') }).toEqual({ table, columns: [from] });
      expect({ table, targets: await referencedBy(db.knex, table, from) }).toEqual({ table, targets: referenced ? [referenced] : [] });
    }
    expect(await numbersNow((table) => OWNED_BY[table])).toEqual(before);
    await db.knex.migrate.up();
    expect(await numbersNow(afterRename)).toEqual(before);
  });
});
