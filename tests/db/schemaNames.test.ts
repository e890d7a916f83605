/**
 * Id columns say what they reference (DESIGN.md "Names and layers"): every `*_id` column (and every `*_by` column,
 * which names a person) has a foreign key to the table its name says, or is listed below with the reason it has none.
 * `workspace_id` → workspaces, `user_id` → users, `project_id` → projects; a qualifier before the name is allowed
 * (`personal_user_id` → users, `committed_project_id` → projects), and so is a group prefix on the table
 * (`reservation_id` → credit_reservations, `endpoint_id` → webhook_endpoints). Read from the run's database, migrated
 * to latest, so a new migration that breaks the rule fails here.
 */
import type { Knex } from 'knex';
import { closeTestKnex, testKnex } from '../support/db';

/** Id columns without a foreign key, and why. */
const WITHOUT_KEY: Readonly<Record<string, string>> = {
  'ai_image_edits.trace_id': 'an OpenTelemetry trace id',
  'ai_image_edits.workflow_id': 'a Temporal workflow id',
  'assembly_jobs.trace_id': 'an OpenTelemetry trace id',
  'assembly_jobs.workflow_id': 'a Temporal workflow id',
  'compiled_videos.workflow_id': 'a Temporal workflow id',
  'content_lineage.workflow_id': 'a Temporal workflow id',
  'data_exports.trace_id': 'an OpenTelemetry trace id',
  'data_exports.workflow_id': 'a Temporal workflow id',
  'draft_jobs.trace_id': 'an OpenTelemetry trace id',
  'draft_jobs.workflow_id': 'a Temporal workflow id',
  'pending_approvals.workflow_id': 'a Temporal workflow id',
  'video_generation_jobs.trace_id': 'an OpenTelemetry trace id',
  'video_generation_jobs.workflow_id': 'a Temporal workflow id',
  'content_lineage.item_id': 'an item of the table its item_kind names',
  'content_lineage.source_id': 'a source of the table its source_kind names',
  'comment_threads.item_id': 'the item of the table its item_kind names (its delete trigger removes the threads)',
  'notifications.item_id': 'the item of the table its item_kind names (a notification outlives a deleted item, showing its text)',
  'pending_approvals.content_id': 'the saved item, in the table its content_type names',
  'pending_approvals.source_job_id': 'the job that made it, in the job table its content_type names',
  'change_requests.next_job_id': 'the job the request started, in the job table its next_job_kind names (chosen before the job exists)',
  'webhook_events.resource_id': 'the resource of the table its type names',
  'credit_transactions.reference_id': 'what the change refers to (a Stripe session, an approval, a job), by its type',
  'credit_purchases.package_id': "a credit package of domain/billing.ts, not a table's row",
  'stripe_refunds.package_id': "a credit package of domain/billing.ts, not a table's row",
  'draft_jobs.model_id': 'a model of domain/enhanceRenders.ts',
  'credit_purchases.payment_intent_id': "Stripe's id",
  'credit_purchases.stripe_price_id': "Stripe's id",
  'workspace_sso_providers.client_id': "the OpenID client id the workspace's identity provider registered for this app",
  'credit_purchases.stripe_session_id': "Stripe's id",
  'stripe_refunds.payment_intent_id': "Stripe's id",
  'stripe_refunds.stripe_event_id': "Stripe's id",
  'stripe_refunds.stripe_refund_id': "Stripe's id",
  'stripe_refunds.stripe_session_id': "Stripe's id",
  'video_generation_jobs.provider_job_id': "the AI provider's id",
  'ai_image_edits.provider_job_id': "the hosted provider's id of the job the run waits for (the edit's, then the upscale's)",
  'stripe_refunds.workspace_id': 'the workspace a refunded payment was for: the refund record outlives it',
  'upload_intents.workspace_id': 'the folder of an object being stored: the abandoned-upload sweep removes what a deleted workspace left',
};

interface IdColumn {
  table: string;
  column: string;
  /** The tables its foreign keys reference (empty: none). */
  references: string[];
}

function plural(word: string): string {
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

/** The tables an id column's name allows it to reference. */
function namedTables(column: string, tables: readonly string[]): string[] {
  if (/_by$/.test(column)) return ['users'];
  const base = column.replace(/_id$/, '');
  const words = base.split('_');
  // the name itself, or its last words after a qualifier (personal_user -> user, committed_project -> project)
  const names = words.map((_, i) => words.slice(i).join('_'));
  return tables.filter((table) => names.some((name) => table === plural(name) || table.endsWith(`_${plural(name)}`)));
}

async function idColumns(db: Knex): Promise<IdColumn[]> {
  const rows = await db.raw<{ rows: Array<{ table: string; column: string; references: string[] | null }> }>(`
    select c.table_name as table, c.column_name as column,
           (select array_agg(distinct k.confrelid::regclass::text order by k.confrelid::regclass::text)
              from pg_constraint k join pg_attribute a on a.attrelid = k.conrelid and a.attnum = any (k.conkey)
             where k.contype = 'f' and k.conrelid = (quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass
               and a.attname = c.column_name) as references
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
     where c.table_schema = current_schema() and c.table_name not like 'knex\\_%'
       and (c.column_name like '%\\_id' or c.column_name like '%\\_by')
     order by 1, 2`);
  return rows.rows.map((r) => ({ table: r.table, column: r.column, references: r.references ?? [] }));
}

/** What is wrong with each id column, as sentences (empty: the schema keeps the rule). */
async function namingProblems(db: Knex): Promise<string[]> {
  const tables = (await db('pg_tables').where({ schemaname: db.raw('current_schema()') }).pluck('tablename')) as string[];
  const problems: string[] = [];
  for (const { table, column, references } of await idColumns(db)) {
    const key = `${table}.${column}`;
    const named = namedTables(column, tables);
    if (key in WITHOUT_KEY) {
      if (references.length) problems.push(`${key} is listed as having no foreign key, but references ${references.join(', ')}`);
      continue;
    }
    if (!references.length) {
      problems.push(`${key} has no foreign key: add one to ${named.join(' or ') || 'the table its name says'}, or list it in WITHOUT_KEY with the reason`);
      continue;
    }
    const wrong = references.filter((target) => !named.includes(target));
    if (wrong.length) problems.push(`${key} references ${wrong.join(', ')}, but its name says ${named.join(' or ') || 'no table of this schema'}`);
  }
  return problems;
}

afterAll(async () => {
  await closeTestKnex();
});

describe('id column names', () => {
  it('every *_id and *_by column references the table its name says, or says why it has no key', async () => {
    const columns = await idColumns(testKnex());
    expect(columns.length).toBeGreaterThan(50);
    expect(await namingProblems(testKnex())).toEqual([]);
  });

  it('every column listed without a key still exists', async () => {
    const present = new Set((await idColumns(testKnex())).map((c) => `${c.table}.${c.column}`));
    expect(Object.keys(WITHOUT_KEY).filter((key) => !present.has(key))).toEqual([]);
  });

  it('no owning-account column keeps an old name: user_id and profile_id reference users only', async () => {
    const columns = await idColumns(testKnex());
    const old = columns.filter((c) => (c.column === 'user_id' || c.column === 'profile_id') && c.references.some((t) => t !== 'users'));
    expect(old).toEqual([]);
    expect(columns.filter((c) => c.column === 'profile_id')).toEqual([]);
  });

  it('fails on a new column that breaks the rule', async () => {
    const trx = await testKnex().transaction();
    try {
      await trx.schema.createTable('naming_probe', (t) => {
        t.uuid('id').primary();
        t.uuid('user_id').references('id').inTable('workspaces');
        t.uuid('project_id');
        t.uuid('owner_workspace_id').references('id').inTable('workspaces');
        t.uuid('reviewed_by').references('id').inTable('projects');
      });
      const problems = (await namingProblems(trx)).filter((p) => p.startsWith('naming_probe.'));
      expect(problems).toEqual([
        'naming_probe.project_id has no foreign key: add one to projects, or list it in WITHOUT_KEY with the reason',
        'naming_probe.reviewed_by references projects, but its name says users',
        'naming_probe.user_id references workspaces, but its name says users',
      ]);
    } finally {
      await trx.rollback();
    }
  });
});
