/**
 * The credit ledger (DESIGN.md "Credits"). Every balance change is one PostgreSQL transaction that locks the
 * profile row, writes, and carries an idempotency key: a repeated key returns the earlier result and writes nothing.
 * Lock order is always profile row first, then the reservation row, so concurrent changes never deadlock.
 *
 * Every change also publishes a 'credits' realtime event in its transaction (services/platform/events.ts).
 *
 * Each function takes the database first: a Knex (a transaction is opened) or a Knex.Transaction (the work runs in
 * a savepoint inside it, so a refusal leaves the caller's transaction usable).
 *
 * This module is the ledger's one public face; the code is split by concern in services/billing/creditLedger/: the locked
 * idempotent balance change (ledger), grants and charges (grants: sign-up bonus, purchases, deductions, admin
 * adjustments), reservations, the start rule, and reporting (summary, limits, transactions, invariant).
 */
export * from './creditLedger/errors';
export * from './creditLedger/types';
export * from './creditLedger/grants';
export * from './creditLedger/reservations';
export * from './creditLedger/startRule';
export * from './creditLedger/reporting';
