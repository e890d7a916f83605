import type { Knex } from 'knex';

/**
 * Workspaces (DESIGN.md "Teams (workspaces)"): a workspace is the account that owns projects (and through them all
 * content, jobs, approvals and assemblies), drafts, purchases and the credit balance with its ledger and reservations.
 *
 * The account row is `profiles`: every workspace has one, with the same id, holding the balance, the counters and the
 * rejection streak, so the specs' per-account rules (pending cap, "rejection requires a purchase", streak and
 * cooldown) hold per workspace. The owning-account columns of the content tables (`user_id` on projects, renders,
 * jobs, approvals, drafts, purchases ...; `profile_id` on the ledger and reservations) name that account.
 *
 * A personal workspace has its owner's user id as its id. That is how this migration moves every existing user's
 * data into their personal workspace: it creates, for each user, the workspace whose id their rows already name, with
 * the user as owner, so balances, reservations, ledger sums and row counts are unchanged by construction
 * (tests/workspaces/migration.test.ts checks it on a seeded database). A team workspace gets a fresh id.
 *
 * `profiles.id` now references `workspaces.id`; a personal workspace references its user (`personal_user_id`,
 * cascading), so deleting a user still removes their personal workspace and everything in it, unless account
 * deletion first hands that workspace over to its other members (services/workspaces/).
 *
 * Acting users: jobs and approvals record who started them (`created_by`), the ledger already had `created_by`; rows
 * from before this migration were all made by (or for) the personal workspace's owner and are filled in with them.
 *
 * Reversible while there is nothing the per-user model cannot hold: `down` refuses when a workspace is not personal,
 * has other members, or holds an open invitation.
 */

const ACCOUNT_COLUMNS_ON_USERS = ['user_events', 'resumable_uploads', 'content_lineage', 'draft_uploads'] as const;
const JOB_TABLES = ['video_generation_jobs', 'assembly_jobs', 'ai_image_edits', 'draft_jobs', 'pending_approvals'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspaces', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.uuid('personal_user_id').unique().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('created_by').references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table workspaces add constraint workspaces_name_not_blank check (length(btrim(name)) between 1 and 100)`);

  await knex.schema.createTable('workspace_members', (t) => {
    t.uuid('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('role').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'user_id']);
    t.index(['user_id']);
  });
  await knex.raw(`alter table workspace_members add constraint workspace_members_role_valid check (role in ('owner', 'admin', 'member', 'viewer'))`);

  await knex.schema.createTable('workspace_invitations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.specificType('email', 'citext').notNullable();
    t.text('role').notNullable();
    t.text('token_hash').notNullable().unique();
    t.uuid('invited_by').references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true });
    t.uuid('accepted_by').references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(`alter table workspace_invitations add constraint workspace_invitations_role_valid check (role in ('admin', 'member', 'viewer'))`);
  // one open invitation per address and workspace: inviting again replaces it (services/workspaces/invitations.ts)
  await knex.raw(
    `create unique index workspace_invitations_open on workspace_invitations (workspace_id, email) where accepted_at is null and revoked_at is null`,
  );

  // every user's personal workspace, with the id their rows already name, and its owner
  await knex.raw(`
    insert into workspaces (id, name, personal_user_id, created_by, created_at, updated_at)
    select u.id, 'Personal', u.id, u.id, u.created_at, u.created_at from users u`);
  await knex.raw(`insert into workspace_members (workspace_id, user_id, role, created_at, updated_at)
                  select id, id, 'owner', created_at, created_at from workspaces`);

  await knex.raw('alter table profiles drop constraint profiles_id_foreign');
  await knex.raw('alter table profiles add constraint profiles_id_foreign foreign key (id) references workspaces (id) on delete cascade');
  for (const table of ACCOUNT_COLUMNS_ON_USERS) {
    await knex.raw(`alter table ${table} drop constraint ${table}_user_id_foreign`);
    await knex.raw(`alter table ${table} add constraint ${table}_user_id_foreign foreign key (user_id) references workspaces (id) on delete cascade`);
  }

  for (const table of JOB_TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.uuid('created_by').references('id').inTable('users').onDelete('SET NULL');
    });
    await knex.raw(`update ${table} set created_by = user_id where created_by is null and exists (select 1 from users where users.id = ${table}.user_id)`);
  }
  await knex.raw(
    `update credit_transactions set created_by = profile_id where created_by is null and exists (select 1 from users where users.id = credit_transactions.profile_id)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  const blocking = await knex.raw(`
    select count(*)::int as n from workspaces w
     where w.personal_user_id is null or w.personal_user_id <> w.id
        or exists (select 1 from workspace_members m where m.workspace_id = w.id and m.user_id <> w.id)
        or exists (select 1 from workspace_invitations i where i.workspace_id = w.id and i.accepted_at is null and i.revoked_at is null)`);
  if (blocking.rows[0].n > 0) {
    throw new Error(`cannot go back to per-user accounts: ${blocking.rows[0].n} workspace(s) are shared or not personal`);
  }
  for (const table of JOB_TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('created_by');
    });
  }
  for (const table of ACCOUNT_COLUMNS_ON_USERS) {
    await knex.raw(`alter table ${table} drop constraint ${table}_user_id_foreign`);
    await knex.raw(`alter table ${table} add constraint ${table}_user_id_foreign foreign key (user_id) references users (id) on delete cascade`);
  }
  await knex.raw('alter table profiles drop constraint profiles_id_foreign');
  await knex.raw('alter table profiles add constraint profiles_id_foreign foreign key (id) references users (id) on delete cascade');
  await knex.schema.dropTable('workspace_invitations');
  await knex.schema.dropTable('workspace_members');
  await knex.schema.dropTable('workspaces');
}
