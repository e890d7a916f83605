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
 *
 * The account is the workspace (DESIGN.md "Teams (workspaces)"): `workspaceId` is the workspace's account row, and
 * each change names the acting user (`actorId`, or `createdBy` with an e-mail), so every ledger row records who
 * acted (created_by, created_by_email; 'system' and null when nobody did). Who that is, writer by writer:
 * - reservation (a generation starts): the member who started it, kept in the reservation's metadata (`actorId`);
 * - consume (approve): the approving member; an approval decided before workspaces: the item's starter;
 * - release: the rejecting member; a failed or cancelled generation: the job's starter; expiry and account
 *   deletion: nobody (system). A release moves no balance, so it writes no ledger row: the reservation's metadata
 *   keeps `releasedBy` and `releaseReason`;
 * - purchase: the buyer (the owner or admin who started the Checkout; Stripe metadata `userId`);
 * - refund: nobody (Stripe's event, issued from its dashboard): a system row;
 * - admin adjustment: the site admin; sign-up bonus: the new user.
 * A user deleted since is recorded as null (created_by references users): spend per member shows such rows as
 * 'deleted account' (services/billing/spendByMember.ts).
 */
export * from './creditLedger/errors';
export * from './creditLedger/types';
export * from './creditLedger/grants';
export * from './creditLedger/reservations';
export * from './creditLedger/startRule';
export * from './creditLedger/reporting';
