import type { Knex } from 'knex';

/**
 * A lease on a webhook delivery while one activity execution sends it (activities/webhookDelivery.ts). The send
 * takes the lease with a conditional update before it POSTs, renews it with its heartbeats and clears it when it
 * records the attempt; a second execution of the same delivery (a retry after a missed heartbeat, another worker)
 * finds the lease held and waits instead of sending, so a receiver that answered 2xx is sent the event again only
 * when the sender died between its answer and the record. `lease_expires_at` is database time, so workers' clocks
 * do not matter; a dead worker's lease lapses on its own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.uuid('lease_token');
    t.timestamp('lease_expires_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('lease_expires_at');
    t.dropColumn('lease_token');
  });
}
