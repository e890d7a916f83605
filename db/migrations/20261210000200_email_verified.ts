import type { Knex } from 'knex';

/**
 * When the account's e-mail was verified (null: not yet). Accounts made before this change stay unverified: an
 * operator marks them (`npm run admin -- verify-existing`, docs/operations.md), or they verify at their next sign-in.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.timestamp('email_verified_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('email_verified_at');
  });
}
