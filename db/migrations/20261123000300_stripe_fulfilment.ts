import type { Knex } from 'knex';

/**
 * What webhook fulfilment and refunds need on credit_purchases: the PaymentIntent (a charge.refunded event names
 * only it), the refunded money and the credits taken back (a refund never takes a balance below zero, so the two
 * can differ), a JSON log of refunds, and the statuses failed / refunded / partially_refunded.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('credit_purchases', (t) => {
    t.text('payment_intent_id').unique();
    t.text('stripe_price_id');
    t.integer('refunded_amount_cents').notNullable().defaultTo(0);
    // credits the refunds asked back (floor(credits x refunded share)) and what the balance allowed to take
    t.integer('credits_claimed_back').notNullable().defaultTo(0);
    t.integer('credits_reversed').notNullable().defaultTo(0);
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.dropChecks(['credit_purchases_status_valid']);
    t.check(
      "status in ('open', 'completed', 'failed', 'expired', 'refunded', 'partially_refunded')",
      [],
      'credit_purchases_status_valid',
    );
    t.check(
      'refunded_amount_cents >= 0 and credits_reversed >= 0 and credits_reversed <= credits_claimed_back and credits_claimed_back <= credits',
      [],
      'credit_purchases_refunds_valid',
    );
  });
}

export async function down(knex: Knex): Promise<void> {
  // the old statuses: a refunded purchase had completed, a failed payment's session expired
  await knex('credit_purchases').whereIn('status', ['refunded', 'partially_refunded']).update({ status: 'completed' });
  await knex('credit_purchases').where({ status: 'failed' }).update({ status: 'expired' });
  await knex.schema.alterTable('credit_purchases', (t) => {
    t.dropChecks(['credit_purchases_status_valid', 'credit_purchases_refunds_valid']);
    t.dropColumns('payment_intent_id', 'stripe_price_id', 'refunded_amount_cents', 'credits_claimed_back', 'credits_reversed', 'metadata', 'updated_at');
    t.check("status in ('open', 'completed', 'expired')", [], 'credit_purchases_status_valid');
  });
}
