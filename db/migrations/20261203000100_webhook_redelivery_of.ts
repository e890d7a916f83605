import type { Knex } from 'knex';

/**
 * "Send again" marks the delivery it makes (services/integrations/webhookDeliveries.ts redeliver): `redelivery_of` is
 * the delivery it sends again, so the delivery log tells a re-send from the original (both carry the same event and
 * `webhook-id`). Null for a delivery the outbox made. Pruning keeps a delivery while a re-send of it is kept, and an
 * event's pruning takes all its deliveries along, so the link holds for as long as the re-send is in the log. The
 * partial index serves that check and the foreign key (most rows are originals, with no value).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.uuid('redelivery_of').references('id').inTable('webhook_deliveries').onDelete('SET NULL');
  });
  await knex.raw('create index webhook_deliveries_redelivery_of on webhook_deliveries (redelivery_of) where redelivery_of is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_deliveries_redelivery_of');
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('redelivery_of');
  });
}
