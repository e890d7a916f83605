import type { Knex } from 'knex';

/**
 * Refunds in the ledger and refunds the app issues itself:
 * - credit_transactions gains the type 'refund': the row a Stripe refund writes. It takes back what the balance
 *   allows (amount <= 0, zero when nothing was available) and records how far total_credits_purchased went down,
 *   so a buyer refunded in full is back to "rejection requires a purchase".
 * - stripe_refunds: payments the app refunded in full because nothing could be credited (the account was deleted,
 *   or is being deleted, when the payment completed). No foreign key to the profile: the record outlives it, so no
 *   money moves without a row saying why. One row per Checkout Session.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('credit_transactions', (t) => {
    t.dropChecks(['credit_transactions_type_valid']);
    t.check(
      "transaction_type in ('signup_bonus', 'purchase', 'add', 'deduct', 'consume', 'admin_adjust', 'refund')",
      [],
      'credit_transactions_type_valid',
    );
  });
  await knex.schema.createTable('stripe_refunds', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('stripe_session_id').notNullable().unique();
    t.text('payment_intent_id').notNullable();
    // the account the payment was for (gone, or going): kept as text, not a foreign key
    t.text('user_id');
    t.text('package_id');
    t.integer('amount_cents').notNullable();
    t.text('currency').notNullable();
    t.text('reason').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.text('stripe_refund_id');
    t.text('stripe_event_id');
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('refunded_at', { useTz: true });
    t.check("status in ('pending', 'refunded', 'failed')", [], 'stripe_refunds_status_valid');
    t.check("reason in ('account_deleted', 'account_being_deleted')", [], 'stripe_refunds_reason_valid');
    t.check('amount_cents >= 0', [], 'stripe_refunds_amount_valid');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('stripe_refunds');
  await knex('credit_transactions').where({ transaction_type: 'refund' }).update({ transaction_type: 'deduct' });
  await knex.schema.alterTable('credit_transactions', (t) => {
    t.dropChecks(['credit_transactions_type_valid']);
    t.check("transaction_type in ('signup_bonus', 'purchase', 'add', 'deduct', 'consume', 'admin_adjust')", [], 'credit_transactions_type_valid');
  });
}
