import type { Knex } from 'knex';

/**
 * Webhooks (DESIGN.md "Integrations (tokens and webhooks)").
 *
 * - `webhook_endpoints`: a workspace's receivers, each with the event types it subscribes to and its signing secret
 *   (`whsec_` + base64, Standard Webhooks). During a rotation the previous secret stays valid until
 *   `previous_secret_expires_at` and deliveries carry both signatures.
 * - `webhook_events`: the outbox. A service writes the event in the same transaction as the change that caused it
 *   (services/integrations/webhookOutbox.ts), together with one `webhook_deliveries` row per subscribed, enabled
 *   endpoint; a crash before commit loses both, after commit neither. `seq` orders events; `resource_id` is what
 *   delivery keeps in order (a job, an approval, a render ...).
 * - `webhook_deliveries`: one event for one endpoint: its state, attempts, last answer and next retry. The delivery
 *   workflow (one per endpoint) works through them in `seq` order per resource. "Send again" adds a new delivery of
 *   the same event (same `webhook-id`, so a receiver can tell).
 * - `webhook_delivery_attempts`: every attempt with its answer, for the delivery log.
 *
 * A statement that adds deliveries sends NOTIFY rs_webhook_outbox '<endpoint id>' on commit, so the relay wakes at
 * once instead of at its next poll.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.specificType('event_types', 'text[]').notNullable();
    t.text('secret').notNullable();
    t.text('previous_secret');
    t.timestamp('previous_secret_expires_at', { useTz: true });
    t.text('status').notNullable().defaultTo('enabled');
    t.text('disabled_reason');
    t.timestamp('disabled_at', { useTz: true });
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.uuid('created_by').references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(`alter table webhook_endpoints add constraint webhook_endpoints_status_valid check (status in ('enabled', 'disabled'))`);
  await knex.raw(`alter table webhook_endpoints add constraint webhook_endpoints_url_length check (length(url) between 8 and 2048)`);

  await knex.schema.createTable('webhook_events', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.bigIncrements('seq', { primaryKey: false });
    t.uuid('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('resource_id').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'seq']);
    t.index(['created_at']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.bigIncrements('seq', { primaryKey: false });
    t.uuid('endpoint_id').notNullable().references('id').inTable('webhook_endpoints').onDelete('CASCADE');
    t.uuid('event_id').notNullable().references('id').inTable('webhook_events').onDelete('CASCADE');
    /** pending: not yet answered 2xx; succeeded; failed: gave up (4xx, 3 days of retries, endpoint disabled) */
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.text('last_error');
    t.integer('last_latency_ms');
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['endpoint_id', 'seq']);
    t.index(['event_id']);
    t.index(['created_at']);
  });
  await knex.raw(`alter table webhook_deliveries add constraint webhook_deliveries_status_valid check (status in ('pending', 'succeeded', 'failed'))`);
  await knex.raw(`create index webhook_deliveries_pending on webhook_deliveries (endpoint_id, seq) where status = 'pending'`);

  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.bigIncrements('id');
    t.uuid('delivery_id').notNullable().references('id').inTable('webhook_deliveries').onDelete('CASCADE');
    t.timestamp('attempted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('status_code');
    t.text('error');
    t.integer('latency_ms');
    /** truncated copies for the log */
    t.text('request_body');
    t.text('response_body');
    t.index(['delivery_id', 'id']);
    t.index(['attempted_at']);
  });

  await knex.raw(`
    create or replace function rs_webhook_outbox() returns trigger language plpgsql as $$
    declare endpoint uuid;
    begin
      for endpoint in select distinct endpoint_id from new_deliveries loop
        perform pg_notify('rs_webhook_outbox', endpoint::text);
      end loop;
      return null;
    end $$;
  `);
  await knex.raw(
    `create trigger webhook_deliveries_added after insert on webhook_deliveries referencing new table as new_deliveries for each statement execute function rs_webhook_outbox()`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists webhook_deliveries_added on webhook_deliveries');
  await knex.raw('drop function if exists rs_webhook_outbox()');
  await knex.schema.dropTableIfExists('webhook_delivery_attempts');
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_events');
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
