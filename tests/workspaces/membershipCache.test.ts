import type { Knex } from 'knex';
import { logger } from '../../config/logger';
import { connectDatabase } from '../../db/connection';
import { authorize, WorkspaceForbiddenError, WorkspaceNotFoundError } from '../../services/workspaces/access';
import { createMembershipCache, type MembershipCache } from '../../services/workspaces/membershipCache';
import { createFundedProfile } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';

/**
 * The access check answers from an in-process cache of memberships. It must stay exact: a member removed or demoted
 * by any process or code path, committed before a check begins, is never answered with the old role.
 * `elsewhere` is a pool of its own that stands for another API process, a worker or psql.
 */
let knex: Knex;
let elsewhere: Knex;
let memberships: MembershipCache;

const check = (userId: string, workspaceId: string, action: 'read' | 'generate' | 'manageMembers') =>
  authorize(knex, { userId, workspaceId, action }, { memberships });

async function teamWith(ownerId: string, memberId: string, role: string): Promise<string> {
  const [ws] = await elsewhere('workspaces').insert({ name: 'Harbour team', created_by: ownerId }).returning<Array<{ id: string }>>('id');
  await elsewhere('workspace_members').insert([
    { workspace_id: ws.id, user_id: ownerId, role: 'owner' },
    { workspace_id: ws.id, user_id: memberId, role },
  ]);
  return ws.id;
}

beforeAll(async () => {
  elsewhere = connectDatabase(process.env.DATABASE_URL as string, { min: 0, max: 4 });
  knex = testKnex();
  memberships = createMembershipCache({ databaseUrl: process.env.DATABASE_URL as string, logger, reconnectMs: 50 });
  await memberships.ready();
});

afterAll(async () => {
  await Promise.all([memberships.close(), elsewhere.destroy(), closeTestKnex()]);
});

describe('workspace membership cache', () => {
  it('answers a member from memory and never keeps a non-member', async () => {
    const owner = await createFundedProfile(knex);
    const member = await createFundedProfile(knex);
    const stranger = await createFundedProfile(knex);
    const ws = await teamWith(owner.id, member.id, 'member');

    await check(member.id, ws, 'generate');
    const before = memberships.stats();
    for (let i = 0; i < 5; i += 1) await check(member.id, ws, 'generate');
    expect(memberships.stats().hits - before.hits).toBe(5);

    const missesBefore = memberships.stats().misses;
    await expect(check(stranger.id, ws, 'read')).rejects.toBeInstanceOf(WorkspaceNotFoundError);
    await expect(check(stranger.id, ws, 'read')).rejects.toBeInstanceOf(WorkspaceNotFoundError);
    expect(memberships.stats().misses - missesBefore).toBe(2);
    // a member's role does not reach further than it allows
    await expect(check(member.id, ws, 'manageMembers')).rejects.toBeInstanceOf(WorkspaceForbiddenError);
    // not uuids: refused before the cache
    await expect(check(member.id, 'not-a-uuid', 'read')).rejects.toBeInstanceOf(WorkspaceNotFoundError);
  });

  it('a member removed in plain SQL elsewhere is refused by the very next check', async () => {
    const owner = await createFundedProfile(knex);
    for (let i = 0; i < 20; i += 1) {
      const member = await createFundedProfile(knex);
      const ws = await teamWith(owner.id, member.id, 'member');
      await check(member.id, ws, 'read');
      await check(member.id, ws, 'read');
      await elsewhere('workspace_members').where({ workspace_id: ws, user_id: member.id }).delete();
      await expect(check(member.id, ws, 'read')).rejects.toBeInstanceOf(WorkspaceNotFoundError);
    }
  });

  it('a role lowered elsewhere is refused its old rights at once; a deleted workspace takes every entry of it', async () => {
    const owner = await createFundedProfile(knex);
    const member = await createFundedProfile(knex);
    const ws = await teamWith(owner.id, member.id, 'admin');
    await check(member.id, ws, 'manageMembers');
    await check(member.id, ws, 'manageMembers');
    await elsewhere('workspace_members').where({ workspace_id: ws, user_id: member.id }).update({ role: 'viewer' });
    await expect(check(member.id, ws, 'generate')).rejects.toBeInstanceOf(WorkspaceForbiddenError);
    await check(member.id, ws, 'read');

    await check(owner.id, ws, 'manageMembers');
    await elsewhere('workspaces').where({ id: ws }).delete();
    await expect(check(owner.id, ws, 'read')).rejects.toBeInstanceOf(WorkspaceNotFoundError);
    await expect(check(member.id, ws, 'read')).rejects.toBeInstanceOf(WorkspaceNotFoundError);
  });
});
