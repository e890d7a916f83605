import type { Knex } from 'knex';

/**
 * Every change to the columns the credit summary shows (balance, reserved, the usage and purchase totals) or the
 * profile's removal sends NOTIFY rs_credits_changed '<profile id>' on commit; a TRUNCATE of profiles sends '*'.
 * API processes keep each user's summary in memory (services/billing/creditSummaryCache.ts) and drop it on that note, so a
 * purchase, reservation, settlement, refund or admin adjustment is seen at once whichever process or code path (the
 * ledger functions, the admin CLI, plain SQL) made it.
 */
const SUMMARY_COLUMNS = [
  'credits',
  'reserved_credits',
  'total_clips_used',
  'total_images_used',
  'total_assemblies_used',
  'total_credits_purchased',
  'total_credits_added',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function rs_credits_changed() returns trigger language plpgsql as $$
    begin
      if TG_OP = 'TRUNCATE' then
        perform pg_notify('rs_credits_changed', '*');
      else
        perform pg_notify('rs_credits_changed', OLD.id::text);
      end if;
      return null;
    end $$;
  `);
  await knex.raw(
    `create trigger profiles_credits_changed after update of ${SUMMARY_COLUMNS.join(', ')} or delete on profiles for each row execute function rs_credits_changed()`,
  );
  await knex.raw(`create trigger profiles_credits_truncated after truncate on profiles for each statement execute function rs_credits_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists profiles_credits_truncated on profiles');
  await knex.raw('drop trigger if exists profiles_credits_changed on profiles');
  await knex.raw('drop function if exists rs_credits_changed()');
}
