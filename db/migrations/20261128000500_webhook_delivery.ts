import type { Knex } from 'knex';

/**
 * Webhook delivery (DESIGN.md "Integrations"): `failing_since` is when the endpoint's current streak of failed
 * attempts began (null after a 2xx). An endpoint whose every attempt has failed for 3 days is disabled
 * (domain/webhookDelivery.ts WEBHOOK_DISABLE_AFTER_MS); the streak's count is `consecutive_failures`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.timestamp('failing_since', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('failing_since');
  });
}
