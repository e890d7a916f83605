/** CLI: `tsx db/migrate.ts latest|rollback|rollback-all`. Used by npm start, npm test and operators. */
import { connectDatabase } from './connection';
import { databaseUrlFrom } from '../config/env';

async function main(): Promise<void> {
  const command = process.argv[2] ?? 'latest';
  // a migration may run long and must see the real error: no statement timeout, no breakers
  const knex = connectDatabase(databaseUrlFrom(), { min: 0, max: 2 }, { queryTimeoutMs: 0, breakers: false });
  try {
    if (command === 'latest') {
      const [, applied] = await knex.migrate.latest();
      console.log(applied.length ? `migrations applied: ${applied.length}` : 'migrations: up to date');
    } else if (command === 'rollback') {
      const [, undone] = await knex.migrate.rollback();
      console.log(`migrations rolled back: ${undone.length}`);
    } else if (command === 'rollback-all') {
      const [, undone] = await knex.migrate.rollback(undefined, true);
      console.log(`migrations rolled back: ${undone.length}`);
    } else {
      throw new Error(`unknown command ${command}`);
    }
  } finally {
    await knex.destroy();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
