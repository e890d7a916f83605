import type { Knex } from 'knex';

/**
 * Client review by link (issue 43, DESIGN.md "Client review (guest links)").
 *
 * - review_links: one shared set of items of a workspace. Only the sha256 of its token is stored (the token is 32
 *   random bytes, shown once to the member who made it); an optional password is an scrypt hash; it expires
 *   (at most 90 days) and can be revoked at once. `can_decide` lets guests approve and request changes,
 *   `can_download` lets them download approved items.
 * - review_link_items: the pending items (pending_approvals rows) on the link; a later version made by a request for
 *   changes is reached through pending_approvals.previous_approval_id.
 * - review_link_sessions: each guest session (a visit): who the guest said they are, when they came.
 * - review_link_decisions: each guest decision, and what it came to (counted under the policy, or handed to the
 *   studio when its rules refused); one counted approval per link and item.
 * - comments.review_link_id with the guest's name and e-mail: a comment a guest wrote (created_by is null).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('review_links', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    // the project whose queue was shared whole (null: chosen items)
    t.uuid('project_id').references('projects.id').onDelete('SET NULL');
    t.text('token_hash').notNullable().unique();
    t.text('title').notNullable();
    t.text('message').notNullable().defaultTo('');
    t.text('password_hash');
    t.boolean('can_decide').notNullable().defaultTo(false);
    t.boolean('can_download').notNullable().defaultTo(false);
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.uuid('revoked_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
    t.index(['created_by']);
    t.index(['revoked_by']);
    t.index(['project_id']);
  });
  await knex.raw(`alter table review_links add constraint review_links_title_length check (char_length(btrim(title)) between 1 and 120)`);
  await knex.raw(`alter table review_links add constraint review_links_message_length check (char_length(message) <= 2000)`);
  await knex.raw(`alter table review_links add constraint review_links_token_hash_hex check (token_hash ~ '^[0-9a-f]{64}$')`);

  await knex.schema.createTable('review_link_items', (t) => {
    t.uuid('review_link_id').notNullable().references('review_links.id').onDelete('CASCADE');
    t.uuid('approval_id').notNullable().references('pending_approvals.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.primary(['review_link_id', 'approval_id']);
    t.index(['approval_id']);
  });

  await knex.schema.createTable('review_link_sessions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('review_link_id').notNullable().references('review_links.id').onDelete('CASCADE');
    t.text('guest_name');
    t.text('guest_email');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['review_link_id', 'created_at']);
  });

  await knex.schema.createTable('review_link_decisions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('review_link_id').notNullable().references('review_links.id').onDelete('CASCADE');
    t.uuid('approval_id').notNullable().references('pending_approvals.id').onDelete('CASCADE');
    t.text('decision').notNullable();
    t.text('outcome').notNullable();
    t.text('guest_name').notNullable();
    t.text('guest_email').notNullable();
    t.text('request');
    // why the studio's rules refused it (outcome studio_asked)
    t.text('refusal');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['review_link_id', 'created_at']);
    t.index(['approval_id']);
  });
  await knex.raw(`alter table review_link_decisions add constraint review_link_decisions_decision check (decision in ('approve', 'request_changes'))`);
  await knex.raw(
    `alter table review_link_decisions add constraint review_link_decisions_outcome check (outcome in ('approved', 'approval_counted', 'changes_requested', 'studio_asked'))`,
  );
  // a link counts as one approval of an item, whoever of its guests gives it
  await knex.raw(
    `create unique index review_link_decisions_one_approval on review_link_decisions (review_link_id, approval_id) where decision = 'approve' and outcome in ('approved', 'approval_counted')`,
  );

  await knex.schema.alterTable('comments', (t) => {
    t.uuid('review_link_id').references('review_links.id').onDelete('SET NULL');
    t.text('guest_name');
    t.text('guest_email');
    t.index(['review_link_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('comments', (t) => {
    t.dropIndex(['review_link_id']);
    t.dropColumn('guest_email');
    t.dropColumn('guest_name');
    t.dropColumn('review_link_id');
  });
  await knex.schema.dropTable('review_link_decisions');
  await knex.schema.dropTable('review_link_sessions');
  await knex.schema.dropTable('review_link_items');
  await knex.schema.dropTable('review_links');
}
