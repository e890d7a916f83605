import type { Knex } from 'knex';

/**
 * Id columns say what they reference (DESIGN.md "Names and layers"). Since workspaces landed, the owning-account
 * columns of the content, job, approval, draft, billing, upload and event tables (`user_id`, and `profile_id` on the
 * ledger and reservations) hold a workspace id; they are renamed `workspace_id`, and their foreign keys point at
 * `workspaces` (before: at `profiles`, the workspace's account row with the same id; deleting a workspace still
 * cascades to them, as it cascades to its profile). Indexes and constraints named after the old column follow.
 * Columns that name a person keep their names (`sessions.user_id`, `workspace_members.user_id`,
 * `access_tokens.user_id`, `created_by`, `invited_by`, ...). tests/db/schemaNames.test.ts holds the rule.
 *
 * Only names change: row counts, balances, ledger sums and reservations are untouched (tests/db/workspaceIdRename.test.ts
 * checks it on a seeded database, and that `down` restores the old names and foreign keys).
 */

interface RenamedColumn {
  table: string;
  from: 'user_id' | 'profile_id';
  /** What the old column's foreign key referenced, restored by `down` (null: it had none). */
  referenced: 'profiles' | 'workspaces' | null;
}

export const RENAMED_COLUMNS: readonly RenamedColumn[] = [
  { table: 'projects', from: 'user_id', referenced: 'profiles' },
  { table: 'renders', from: 'user_id', referenced: 'profiles' },
  { table: 'images', from: 'user_id', referenced: 'profiles' },
  { table: 'clips', from: 'user_id', referenced: 'profiles' },
  { table: 'compiled_videos', from: 'user_id', referenced: 'profiles' },
  { table: 'generated_content', from: 'user_id', referenced: 'profiles' },
  { table: 'pending_approvals', from: 'user_id', referenced: 'profiles' },
  { table: 'ai_image_edits', from: 'user_id', referenced: 'profiles' },
  { table: 'video_generation_jobs', from: 'user_id', referenced: 'profiles' },
  { table: 'assembly_jobs', from: 'user_id', referenced: 'profiles' },
  { table: 'aesthetic_chats', from: 'user_id', referenced: 'profiles' },
  { table: 'drafts', from: 'user_id', referenced: 'profiles' },
  { table: 'draft_jobs', from: 'user_id', referenced: 'profiles' },
  { table: 'credit_purchases', from: 'user_id', referenced: 'profiles' },
  { table: 'data_exports', from: 'user_id', referenced: 'profiles' },
  { table: 'credit_transactions', from: 'profile_id', referenced: 'profiles' },
  { table: 'credit_reservations', from: 'profile_id', referenced: 'profiles' },
  { table: 'user_events', from: 'user_id', referenced: 'workspaces' },
  { table: 'resumable_uploads', from: 'user_id', referenced: 'workspaces' },
  { table: 'content_lineage', from: 'user_id', referenced: 'workspaces' },
  { table: 'draft_uploads', from: 'user_id', referenced: 'workspaces' },
  // the workspace a refunded payment was credited to, kept as text without a key: the refund record outlives it
  { table: 'stripe_refunds', from: 'user_id', referenced: null },
];

/** Indexes named after what they index rather than after the column. */
const OTHER_INDEX_NAMES: ReadonlyArray<[string, string]> = [
  ['data_exports_user_sequence_unique', 'data_exports_workspace_sequence_unique'],
  ['draft_uploads_waiting_by_user', 'draft_uploads_waiting_by_workspace'],
];

async function renameNamedAfter(knex: Knex, table: string, from: string, to: string): Promise<void> {
  const oldPrefix = `${table}_${from}`;
  const newPrefix = `${table}_${to}`;
  const constraints = await knex.raw<{ rows: Array<{ name: string }> }>(
    `select conname as name from pg_constraint where conrelid = ?::regclass and conname like ? || '%'`,
    [table, oldPrefix],
  );
  for (const { name } of constraints.rows) {
    await knex.raw('alter table ?? rename constraint ?? to ??', [table, name, newPrefix + name.slice(oldPrefix.length)]);
  }
  const indexes = await knex.raw<{ rows: Array<{ name: string }> }>(
    `select indexname as name from pg_indexes where schemaname = current_schema() and tablename = ? and indexname like ? || '%'`,
    [table, oldPrefix],
  );
  for (const { name } of indexes.rows) {
    await knex.raw('alter index ?? rename to ??', [name, newPrefix + name.slice(oldPrefix.length)]);
  }
}

async function renameIndexIfPresent(knex: Knex, from: string, to: string): Promise<void> {
  await knex.raw(`alter index if exists ?? rename to ??`, [from, to]);
}

export async function up(knex: Knex): Promise<void> {
  for (const { table, from, referenced } of RENAMED_COLUMNS) {
    await knex.raw('alter table ?? rename column ?? to workspace_id', [table, from]);
    await renameNamedAfter(knex, table, from, 'workspace_id');
    if (referenced === 'profiles') {
      await knex.raw(`alter table ?? drop constraint ??`, [table, `${table}_workspace_id_foreign`]);
      await knex.raw(`alter table ?? add constraint ?? foreign key (workspace_id) references workspaces (id) on delete cascade`, [
        table,
        `${table}_workspace_id_foreign`,
      ]);
    }
  }
  for (const [from, to] of OTHER_INDEX_NAMES) await renameIndexIfPresent(knex, from, to);
}

export async function down(knex: Knex): Promise<void> {
  for (const [from, to] of OTHER_INDEX_NAMES) await renameIndexIfPresent(knex, to, from);
  for (const { table, from, referenced } of [...RENAMED_COLUMNS].reverse()) {
    if (referenced === 'profiles') {
      await knex.raw(`alter table ?? drop constraint ??`, [table, `${table}_workspace_id_foreign`]);
      await knex.raw(`alter table ?? add constraint ?? foreign key (workspace_id) references profiles (id) on delete cascade`, [
        table,
        `${table}_workspace_id_foreign`,
      ]);
    }
    await renameNamedAfter(knex, table, 'workspace_id', from);
    await knex.raw('alter table ?? rename column workspace_id to ??', [table, from]);
  }
}
