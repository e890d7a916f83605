import type { Knex } from 'knex';

/**
 * Notifications (issue 42, DESIGN.md "Review"): one row per person and event, feeding the bell (live over the event
 * stream) and, with SMTP set up, e-mail by the person's choice (users.notification_email: each, digest or none).
 * A row names its workspace (it goes with it), its recipient (it goes with their account), who caused it and the
 * item it is about (an approval or saved item id, as comment threads name items: no key, its kind says where).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('notifications', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('item_kind');
    t.uuid('item_id');
    t.uuid('project_id').references('projects.id').onDelete('SET NULL');
    t.uuid('thread_id').references('comment_threads.id').onDelete('SET NULL');
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.text('text').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('read_at', { useTz: true });
    t.timestamp('emailed_at', { useTz: true });
    t.index(['user_id', 'workspace_id', 'created_at']);
  });
  await knex.raw(`alter table notifications add constraint notifications_kind_valid check (kind in ('mention', 'approval_needed', 'decision', 'comment', 'reply'))`);
  await knex.raw(`create index notifications_unread on notifications (user_id, workspace_id) where read_at is null`);
  await knex.schema.alterTable('users', (t) => {
    t.text('notification_email').notNullable().defaultTo('each');
  });
  await knex.raw(`alter table users add constraint users_notification_email_valid check (notification_email in ('each', 'digest', 'none'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table users drop constraint users_notification_email_valid');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('notification_email');
  });
  await knex.schema.dropTable('notifications');
}
