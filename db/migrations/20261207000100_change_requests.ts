import type { Knex } from 'knex';

/**
 * "Request changes" (issue 42, DESIGN.md "Review"): a reviewer rejects a pending item with a request, and a new job
 * starts from the same source with the request folded into it. Its item is the next version of the rejected one:
 * pending_approvals gains its version number and the version before it. change_requests keeps each request (who,
 * what, the settings the new job used, the comment holding the text) and links the job it started, so the item the
 * job makes finds the version it follows when it is recorded. A thread carried over to the next version remembers
 * the version it was started on (comment_threads.on_version).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('pending_approvals', (t) => {
    t.integer('version').notNullable().defaultTo(1);
    t.uuid('previous_approval_id').references('pending_approvals.id').onDelete('SET NULL');
  });
  await knex.raw('alter table pending_approvals add constraint pending_approvals_version_positive check (version >= 1)');
  await knex.schema.createTable('change_requests', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    // the rejected item the request was made on
    t.uuid('approval_id').notNullable().references('pending_approvals.id').onDelete('CASCADE');
    t.uuid('requested_by').references('users.id').onDelete('SET NULL');
    t.uuid('comment_id').references('comments.id').onDelete('SET NULL');
    t.text('request').notNullable();
    // image: the prompt the new job was given; clip: its effect, platform and guidance
    t.jsonb('settings').notNullable();
    t.text('next_job_kind').notNullable();
    t.uuid('next_job_id').notNullable();
    t.uuid('next_approval_id').references('pending_approvals.id').onDelete('SET NULL');
    // why the new job could not start (the rejection stands; the request is kept in the thread)
    t.text('start_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['next_job_id']);
    t.index(['approval_id']);
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(`alter table change_requests add constraint change_requests_next_job_kind check (next_job_kind in ('image', 'clip'))`);
  await knex.schema.alterTable('comment_threads', (t) => {
    t.integer('on_version');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('comment_threads', (t) => {
    t.dropColumn('on_version');
  });
  await knex.schema.dropTable('change_requests');
  await knex.raw('alter table pending_approvals drop constraint pending_approvals_version_positive');
  await knex.schema.alterTable('pending_approvals', (t) => {
    t.dropColumn('previous_approval_id');
    t.dropColumn('version');
  });
}
