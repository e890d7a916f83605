/**
 * Issue 27, acceptance 1: the workspaces migration moves every user's data into their personal workspace. On a
 * database of its own, migrated to the step before it and seeded with several users' projects, content, jobs,
 * approvals, drafts, assemblies, purchases, ledgers and reservations, every user's numbers (balance, reserved
 * credits, ledger sum, active reservations, row counts per table) are the same for their workspace after `up`, after
 * `down` and `up` again; and `down` is refused once a workspace is shared.
 */
import { randomUUID } from 'node:crypto';
import { ledger, numbersOf, seedUser, type AccountNumbers } from '../support/accountSeed';
import { createScratchDatabase, migrateUpTo, type ScratchDatabase } from '../support/scratchDatabase';

const WORKSPACES_MIGRATION = '20261127000700_workspaces';

let db: ScratchDatabase;
let users: string[] = [];
let before: Record<string, AccountNumbers> = {};

beforeAll(async () => {
  db = await createScratchDatabase('migration');
  await migrateUpTo(db.knex, WORKSPACES_MIGRATION);
  expect(await db.knex.schema.hasTable('workspaces')).toBe(false);
  users = [];
  for (let n = 0; n < 4; n++) users.push(await seedUser(db.knex, n, n + 1));
  // a user with nothing but their account row and the welcome credits
  const email = `bare-${randomUUID()}@example.test`;
  const [{ id: bare }] = await db.knex('users').insert({ email, password_hash: 'x' }).returning('id');
  await db.knex('profiles').insert({ id: bare, email });
  await ledger(db.knex, bare, 5, 'signup_bonus');
  users.push(bare);
  before = {};
  for (const id of users) before[id] = await numbersOf(db.knex, id);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

async function expectSameNumbers(): Promise<void> {
  for (const id of users) expect({ id, ...(await numbersOf(db.knex, id)) }).toEqual({ id, ...before[id] });
}

describe('the workspaces migration', () => {
  it('seeds users whose ledgers add up and who have rows in every table', () => {
    for (const id of users.slice(0, 4)) {
      const n = before[id];
      expect(n.credits).toBe(n.ledgerSum);
      expect(n.reserved).toBe(n.activeReservations);
      expect(n.reserved).toBeGreaterThan(0);
      for (const [table, count] of Object.entries(n.rows)) expect({ table, count: count > 0 }).toEqual({ table, count: true });
    }
    // the users differ, so rows moved to the wrong account would show
    expect(new Set(users.map((id) => before[id].rows.projects)).size).toBeGreaterThan(3);
  });

  it("gives every user a personal workspace with their own id, them as its owner, and all their numbers", async () => {
    const [, applied] = await db.knex.migrate.up();
    expect(applied).toEqual([`${WORKSPACES_MIGRATION}.ts`]);
    const workspaces = await db.knex('workspaces').orderBy('id').select('id', 'personal_user_id', 'name', 'created_by');
    expect(workspaces).toEqual([...users].sort().map((id) => ({ id, personal_user_id: id, name: 'Personal', created_by: id })));
    const members = await db.knex('workspace_members').orderBy('workspace_id').select('workspace_id', 'user_id', 'role');
    expect(members).toEqual([...users].sort().map((id) => ({ workspace_id: id, user_id: id, role: 'owner' })));
    await expectSameNumbers();
    // acting users: the jobs, approvals and ledger rows from before were the owner's
    for (const table of ['video_generation_jobs', 'assembly_jobs', 'ai_image_edits', 'draft_jobs', 'pending_approvals']) {
      const unattributed = await db.knex(table).whereRaw('created_by is distinct from user_id').count<{ n: string }>('* as n').first();
      expect({ table, unattributed: Number(unattributed?.n) }).toEqual({ table, unattributed: 0 });
    }
    const ledgerUnattributed = await db.knex('credit_transactions').whereRaw('created_by is distinct from profile_id').count<{ n: string }>('* as n').first();
    expect(Number(ledgerUnattributed?.n)).toBe(0);
    // the account rows now hang off the workspace: deleting a user still removes everything of theirs
    const fk = await db.knex.raw(`select confrelid::regclass::text as target from pg_constraint where conname = 'profiles_id_foreign'`);
    expect(fk.rows[0].target).toBe('workspaces');
  });

  it('goes down and up again while every workspace is personal and solo, with the same numbers', async () => {
    const [, undone] = await db.knex.migrate.down();
    expect(undone).toEqual([`${WORKSPACES_MIGRATION}.ts`]);
    expect(await db.knex.schema.hasTable('workspaces')).toBe(false);
    expect(await db.knex.schema.hasColumn('video_generation_jobs', 'created_by')).toBe(false);
    await expectSameNumbers();
    await db.knex.migrate.up();
    expect(await db.knex('workspaces').count<{ n: string }>('* as n').first()).toEqual({ n: String(users.length) });
    await expectSameNumbers();
  });

  it('refuses to go down once a workspace has a second member, a team workspace exists or an invitation is open, and changes nothing', async () => {
    const [owner, colleague] = users;
    const attempt = async (): Promise<string> => {
      const err = await db.knex.migrate.down().then(() => null, (e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      return err!.message;
    };

    await db.knex('workspace_members').insert({ workspace_id: owner, user_id: colleague, role: 'member' });
    expect(await attempt()).toMatch(/cannot go back to per-user accounts: 1 workspace\(s\) are shared or not personal/);
    expect(await db.knex.schema.hasTable('workspaces')).toBe(true);
    expect(await db.knex.schema.hasColumn('video_generation_jobs', 'created_by')).toBe(true);
    const [completed] = (await db.knex.migrate.list()) as [Array<{ name: string }>, unknown[]];
    expect(completed.map((m) => m.name)).toContain(`${WORKSPACES_MIGRATION}.ts`);
    await expectSameNumbers();
    await db.knex('workspace_members').where({ workspace_id: owner, user_id: colleague }).delete();

    const [{ id: team }] = await db.knex('workspaces').insert({ name: 'Studio', created_by: owner }).returning('id');
    await db.knex('workspace_members').insert({ workspace_id: team, user_id: owner, role: 'owner' });
    expect(await attempt()).toMatch(/1 workspace\(s\) are shared or not personal/);
    await db.knex('workspaces').where({ id: team }).delete();

    await db.knex('workspace_invitations').insert({
      workspace_id: owner,
      email: 'someone@example.test',
      role: 'member',
      token_hash: randomUUID(),
      invited_by: owner,
      expires_at: new Date(Date.now() + 86_400_000),
    });
    expect(await attempt()).toMatch(/1 workspace\(s\) are shared or not personal/);
    await db.knex('workspace_invitations').where({ workspace_id: owner }).update({ revoked_at: db.knex.fn.now() });

    // with the workspace solo again (a revoked invitation holds nothing open), down works
    const [, undone] = await db.knex.migrate.down();
    expect(undone).toEqual([`${WORKSPACES_MIGRATION}.ts`]);
    await expectSameNumbers();
  });
});
