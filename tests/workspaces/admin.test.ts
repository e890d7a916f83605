/**
 * Site admin in a team product (issue 27, items 4 and 7; DESIGN.md "Teams (workspaces)"): credits belong to the
 * workspace, so an admin adjustment targets a workspace, found by its name or a member's e-mail, through the API
 * and `npm run admin -- adjust` (its module function, on the test database); the ledger row records the site admin
 * as the acting user. The admin user detail lists the user's workspaces with role, member count and balance.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { checkLedgerInvariant } from '../../services/billing/credits';
import { adminCommand, type Database } from '../../scripts/admin';
import { createTestUser, makeAdmin, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWorkspace, joinWorkspace } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
let admin: TestUser;
/** this run's names, so a search sees only this file's workspaces */
const RUN = randomUUID().slice(0, 8);

beforeAll(async () => {
  knex = testKnex();
  server = await serve(createApp({ config: loadConfig(), knex, logger }));
  admin = await createTestUser(server.baseUrl, { name: 'Ada Admin' });
  await makeAdmin(knex, admin.id);
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

function adjust(json: Record<string, unknown>, token = admin.token) {
  return request<{ success: boolean; data: Record<string, unknown> & { credits: { credits: number } }; error?: string; code?: string }>(
    server.baseUrl,
    '/api/admin/credits/adjust',
    { token, json },
  );
}

/** `npm run admin -- <argv>` through the command's own function, on the test database (left open). */
function cli(argv: string[]) {
  return adminCommand(argv, async (): Promise<Database> => ({ knex, close: async () => undefined }));
}

async function balance(workspaceId: string): Promise<number> {
  return (await knex('profiles').where({ id: workspaceId }).first('credits')).credits;
}

async function adminRows(workspaceId: string) {
  return knex('credit_transactions')
    .where({ workspace_id: workspaceId, transaction_type: 'admin_adjust' })
    .orderBy('created_at')
    .select('amount', 'description', 'created_by', 'created_by_email');
}

describe('admin credit adjustments target a workspace', () => {
  it('by workspace name, by a member e-mail (their personal workspace), by e-mail and name; the ledger names the admin', async () => {
    const team = await createTeamWorkspace(server.baseUrl, { name: `Harbour ${RUN}` });
    const member = await joinWorkspace(server.baseUrl, team, 'member');

    const byName = await adjust({ workspace: `  harbour ${RUN.toUpperCase()} `, amount: 25, reason: 'Team onboarding credits' });
    expect(byName.status).toBe(201);
    expect(byName.body.data).toMatchObject({ userId: team.id, workspace: { id: team.id, name: team.name, personal: false }, amount: 25, balanceAfter: 25, createdByEmail: admin.email });
    expect(byName.body.data.credits).toMatchObject({ credits: 25, reservedCredits: 0, availableCredits: 25 });

    // an e-mail alone: that member's personal workspace, not the team's
    const byEmail = await adjust({ email: member.email.toUpperCase(), amount: 3, reason: 'Goodwill' });
    expect(byEmail.status).toBe(201);
    expect(byEmail.body.data).toMatchObject({ workspace: { id: member.id, name: 'Personal', personal: true }, balanceAfter: 8 });

    // an e-mail and a name: the workspace of that name the member belongs to
    const both = await adjust({ email: member.email, workspace: team.name, amount: -5, reason: 'Correction' });
    expect(both.status).toBe(201);
    expect(both.body.data).toMatchObject({ workspace: { id: team.id }, balanceAfter: 20 });

    expect(await balance(team.id)).toBe(20);
    expect(await balance(member.id)).toBe(8);
    expect(await balance(team.owner.id)).toBe(5);
    expect(await adminRows(team.id)).toEqual([
      { amount: 25, description: 'Team onboarding credits', created_by: admin.id, created_by_email: admin.email },
      { amount: -5, description: 'Correction', created_by: admin.id, created_by_email: admin.email },
    ]);
    expect((await checkLedgerInvariant(knex, team.id)).ok).toBe(true);
    // every member sees it in the workspace's ledger
    const seen = await request<{ data: Array<{ transactionType: string; amount: number; createdByEmail: string }> }>(server.baseUrl, '/api/credits/transactions', {
      token: member.token,
      headers: { 'X-Workspace-Id': team.id },
    });
    expect(seen.body.data[0]).toMatchObject({ transactionType: 'admin_adjust', amount: -5, createdByEmail: admin.email });
  });

  it('refuses an ambiguous name (409, listing the matches), an unknown name or e-mail (404) and a double target (400), changing nothing', async () => {
    const first = await createTeamWorkspace(server.baseUrl, { name: `Twin ${RUN}` });
    const second = await createTeamWorkspace(server.baseUrl, { name: `twin ${RUN}` });
    const outsider = await createTestUser(server.baseUrl);

    const ambiguous = await adjust({ workspace: `Twin ${RUN}`, amount: 5, reason: 'Which one?' });
    expect([ambiguous.status, ambiguous.body.code]).toEqual([409, 'WORKSPACE_AMBIGUOUS']);
    expect(ambiguous.body.error).toBe(
      `2 workspaces are named “Twin ${RUN}”: “Twin ${RUN}” (id ${first.id}, owner ${first.owner.email}, 1 member); ` +
        `“twin ${RUN}” (id ${second.id}, owner ${second.owner.email}, 1 member). Name a member's e-mail as well, or the workspace id.`,
    );
    // a member's e-mail settles it
    const settled = await adjust({ workspace: `Twin ${RUN}`, email: second.owner.email, amount: 5, reason: 'The second twin' });
    expect([settled.status, (settled.body.data.workspace as { id: string }).id]).toEqual([201, second.id]);

    for (const [json, status, message] of [
      [{ workspace: `Nowhere ${RUN}`, amount: 1, reason: 'x' }, 404, `No workspace is named “Nowhere ${RUN}”`],
      [{ email: `nobody-${RUN}@example.test`, amount: 1, reason: 'x' }, 404, `No account with the e-mail nobody-${RUN}@example.test`],
      [{ email: outsider.email, workspace: first.name, amount: 1, reason: 'x' }, 404, `${outsider.email} is not a member of a workspace named “${first.name}”`],
      [{ workspaceId: randomUUID(), amount: 1, reason: 'x' }, 404, 'Workspace not found'],
      [{ workspaceId: first.id, userId: outsider.id, amount: 1, reason: 'x' }, 400, 'Name the workspace one way only: workspaceId, userId, or workspace and/or email'],
      [{ amount: 1, reason: 'x' }, 400, 'Name the workspace: workspaceId, userId, a workspace name (workspace) or a member e-mail (email)'],
      [{ workspace: '   ', amount: 1, reason: 'x' }, 400, 'workspace must not be blank'],
    ] as const) {
      const res = await adjust(json);
      expect([json, res.status, res.body.error]).toEqual([json, status, message]);
    }
    expect(await balance(first.id)).toBe(0);
    expect(await balance(second.id)).toBe(5);
    expect(await balance(outsider.id)).toBe(5);
    expect(await adminRows(first.id)).toEqual([]);
  });

  it('GET /api/admin/workspaces finds workspaces by name with owners, members and balance; admins only', async () => {
    const team = await createTeamWorkspace(server.baseUrl, { name: `Finder ${RUN}` });
    await joinWorkspace(server.baseUrl, team, 'viewer');
    const res = await request<{ data: unknown[]; hasMore: boolean }>(server.baseUrl, `/api/admin/workspaces?name=${encodeURIComponent(`finder ${RUN}`)}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: [
        {
          id: team.id,
          name: team.name,
          personal: false,
          memberCount: 2,
          credits: 0,
          reservedCredits: 0,
          availableCredits: 0,
          owners: [{ id: team.owner.id, email: team.owner.email }],
        },
      ],
      hasMore: false,
      limit: 20,
    });
    expect((await request(server.baseUrl, `/api/admin/workspaces?name=x`, { token: team.owner.token })).status).toBe(403);
    const blank = await request<{ error: string }>(server.baseUrl, '/api/admin/workspaces?name=%20', { token: admin.token });
    expect([blank.status, blank.body.error]).toEqual([400, 'name is required']);
  });
});

describe('npm run admin -- adjust', () => {
  it('adjusts a workspace found by name or by a member e-mail, recording the admin named by --by', async () => {
    const team = await createTeamWorkspace(server.baseUrl, { name: `Cli Studio ${RUN}` });
    const member = await joinWorkspace(server.baseUrl, team, 'admin');

    const byName = await cli(['adjust', '40', '--workspace', team.name, '--reason', 'Invoice 2041 paid by transfer', '--by', admin.email]);
    expect(byName).toEqual({
      code: 0,
      stdout: `Added 40 credits to the workspace “${team.name}” (${team.id}): balance 40, available 40. Recorded by ${admin.email}.\n`,
      stderr: '',
    });
    const byEmail = await cli(['adjust', '-2', `--email=${member.email}`, '--reason', 'Duplicate goodwill', '--by', admin.email]);
    expect(byEmail).toEqual({
      code: 0,
      stdout: `Removed 2 credits from the personal workspace “Personal” (${member.id}): balance 3, available 3. Recorded by ${admin.email}.\n`,
      stderr: '',
    });
    const both = await cli(['adjust', '+5', '--email', member.email, '--workspace', team.name, '--reason', 'Top-up', '--by', admin.email, '--key', `k-${RUN}`]);
    expect([both.code, both.stdout]).toEqual([0, `Added 5 credits to the workspace “${team.name}” (${team.id}): balance 45, available 45. Recorded by ${admin.email}.\n`]);
    // the same key again: applied once
    const again = await cli(['adjust', '+5', '--email', member.email, '--workspace', team.name, '--reason', 'Top-up', '--by', admin.email, '--key', `k-${RUN}`]);
    expect([again.code, again.stdout]).toEqual([0, `Already applied with this key; nothing changed. the workspace “${team.name}” (${team.id}): balance 45, available 45\n`]);

    expect(await adminRows(team.id)).toEqual([
      { amount: 40, description: 'Invoice 2041 paid by transfer', created_by: admin.id, created_by_email: admin.email },
      { amount: 5, description: 'Top-up', created_by: admin.id, created_by_email: admin.email },
    ]);
    expect(await adminRows(member.id)).toEqual([{ amount: -2, description: 'Duplicate goodwill', created_by: admin.id, created_by_email: admin.email }]);
  });

  it('refuses an ambiguous name (listing the matches), a --by who is not a site admin and bad arguments, changing nothing', async () => {
    const first = await createTeamWorkspace(server.baseUrl, { name: `Cli Twin ${RUN}` });
    const second = await createTeamWorkspace(server.baseUrl, { name: `Cli Twin ${RUN}` });
    const ambiguous = await cli(['adjust', '5', '--workspace', `cli twin ${RUN}`, '--reason', 'x', '--by', admin.email]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toBe(
      `2 workspaces are named “cli twin ${RUN}”: “Cli Twin ${RUN}” (id ${first.id}, owner ${first.owner.email}, 1 member); ` +
        `“Cli Twin ${RUN}” (id ${second.id}, owner ${second.owner.email}, 1 member). Name a member's e-mail as well, or the workspace id.\n`,
    );
    const notAdmin = await cli(['adjust', '5', '--workspace-id', first.id, '--reason', 'x', '--by', first.owner.email]);
    expect(notAdmin).toEqual({ code: 1, stdout: '', stderr: `--by must name a site admin: ${first.owner.email} is not one (npm run admin -- grant ${first.owner.email})\n` });
    const tooMuch = await cli(['adjust', '-1', '--workspace-id', first.id, '--reason', 'x', '--by', admin.email]);
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.stderr).toMatch(/^Cannot remove 1 credit: .* Credits never go below zero\.\n$/);

    for (const [args, message] of [
      [['adjust', '--workspace', 'A', '--reason', 'x', '--by', admin.email], 'adjust needs the number of credits, e.g. 10 or -10'],
      [['adjust', '0', '--workspace', 'A', '--reason', 'x', '--by', admin.email], 'the number of credits must not be zero'],
      [['adjust', '1.5', '--workspace', 'A', '--reason', 'x', '--by', admin.email], '"1.5" is not a whole number of credits'],
      [['adjust', '5', '--workspace', 'A', '--by', admin.email], '--reason is required: it is recorded in the ledger and shown to the workspace'],
      [['adjust', '5', '--workspace', 'A', '--reason', 'x'], '--by is required: the e-mail of the site admin the ledger records as making the change'],
      [['adjust', '5', '--reason', 'x', '--by', admin.email], 'name the workspace: --email <member e-mail>, --workspace <name> (or both), or --workspace-id <id>'],
      [['adjust', '5', '--workspace-id', first.id, '--email', admin.email, '--reason', 'x', '--by', admin.email], '--workspace-id names the workspace on its own: leave out --email and --workspace'],
      [['adjust', '5', '--workspace', 'A', '--reason', 'x', '--by', admin.email, '--colour', 'red'], 'Unknown option "--colour"'],
      [['adjust', '5', '--workspace', '--reason', 'x', '--by', admin.email], '--workspace needs a value'],
    ] as const) {
      const res = await cli([...args]);
      expect([args, res.code, res.stderr.split('\n')[0]]).toEqual([args, 2, message]);
      expect(res.stderr).toContain('adjust <credits> --reason <text> --by <admin email> <workspace>');
    }
    expect(await balance(first.id)).toBe(0);
    expect(await balance(second.id)).toBe(0);
  });
});

describe('admin user detail', () => {
  it("lists the user's workspaces with their role, member count and balance, personal first", async () => {
    const user = await createTestUser(server.baseUrl, { name: 'Wanda Workspaces' });
    const own = await createTeamWorkspace(server.baseUrl, { owner: user, name: `B Own Studio ${RUN}` });
    const other = await createTeamWorkspace(server.baseUrl, { name: `A Client Team ${RUN}` });
    await joinWorkspace(server.baseUrl, other, 'viewer', user);
    await joinWorkspace(server.baseUrl, other, 'member');
    expect((await adjust({ workspaceId: other.id, amount: 12, reason: 'Client credits' })).status).toBe(201);

    const res = await request<{ data: { workspaces: unknown[]; credits: { credits: number } } }>(server.baseUrl, `/api/admin/users/${user.id}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.data.credits.credits).toBe(5);
    expect(res.body.data.workspaces).toEqual([
      { id: user.id, name: 'Personal', personal: true, role: 'owner', memberCount: 1, credits: 5, reservedCredits: 0, availableCredits: 5 },
      { id: other.id, name: other.name, personal: false, role: 'viewer', memberCount: 3, credits: 12, reservedCredits: 0, availableCredits: 12 },
      { id: own.id, name: own.name, personal: false, role: 'owner', memberCount: 1, credits: 0, reservedCredits: 0, availableCredits: 0 },
    ]);
  });
});
