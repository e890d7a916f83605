import type { Knex } from 'knex';

/**
 * Approval by more than one person (issue 42, DESIGN.md "Review"). A workspace's policy is "any member may approve"
 * (the default: the specs' behaviour), "N approvals" (2 or 3 different members) or "these approvers" (the members
 * listed in workspace_approvers, all of whom must approve). Only rows of current members count: someone who left is
 * no longer a named approver (services/workspaces/approvalPolicy.ts reads them through workspace_members).
 *
 * A pending item keeps the policy it started with: pending_approvals.approval_policy is a copy made when the item
 * was recorded (domain/approvalPolicy.ts; null on items from before this change: any member). Each approval is an
 * approval_decisions row, one per person and item; the last one the policy needs is recorded in the transaction
 * that charges (activities/approvals.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.text('approval_policy').notNullable().defaultTo('any');
    t.smallint('approval_count');
  });
  await knex.raw(`alter table workspaces add constraint workspaces_approval_policy_valid check (approval_policy in ('any', 'count', 'named'))`);
  await knex.raw(
    `alter table workspaces add constraint workspaces_approval_count_valid check ((approval_policy = 'count') = (approval_count is not null) and (approval_count is null or approval_count between 2 and 3))`,
  );

  await knex.schema.createTable('workspace_approvers', (t) => {
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'user_id']);
  });

  await knex.schema.alterTable('pending_approvals', (t) => {
    // { kind: 'any' } | { kind: 'count', count } | { kind: 'named', userIds }: domain/approvalPolicy.ts
    t.jsonb('approval_policy');
    // who made the final decision (the approval that met the policy, or the rejection): the item's history
    t.uuid('decided_by').references('users.id').onDelete('SET NULL');
  });
  await knex.raw(`alter table pending_approvals add constraint pending_approvals_policy_object check (approval_policy is null or jsonb_typeof(approval_policy) = 'object')`);

  await knex.schema.createTable('approval_decisions', (t) => {
    t.uuid('approval_id').notNullable().references('pending_approvals.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // one approval per person and item
    t.primary(['approval_id', 'user_id']);
    t.index(['user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('approval_decisions');
  await knex.raw('alter table pending_approvals drop constraint pending_approvals_policy_object');
  await knex.schema.alterTable('pending_approvals', (t) => {
    t.dropColumn('decided_by');
    t.dropColumn('approval_policy');
  });
  await knex.schema.dropTable('workspace_approvers');
  await knex.raw('alter table workspaces drop constraint workspaces_approval_count_valid');
  await knex.raw('alter table workspaces drop constraint workspaces_approval_policy_valid');
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('approval_count');
    t.dropColumn('approval_policy');
  });
}
