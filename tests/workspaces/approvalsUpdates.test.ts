/**
 * The approval workflow's Update validators in a world of workspaces (workflows/approval.ts): a decision names the
 * acting user and the workspace the request acts in; the validator refuses one whose workspace is not the item's
 * (whoever sends it), and the acting user is recorded on the consume row or the release. An update in the shape
 * from before workspaces ({ userId } of the owner, no accountId) still decides a personal workspace's item.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { APPROVAL_NOT_OWNER, approveUpdate, rejectUpdate } from '../../domain/workflowContracts/approval';
import { addCredits } from '../../services/billing/credits';
import { createTestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import { startHarness, type Harness } from '../imageEdit/harness';
import { accountSnapshot, createTeam, seedTeamImage, teamProject } from './creditsFixtures';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('approval-updates');
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  return ((err as WorkflowUpdateFailedError).cause as { type?: string } | undefined)?.type;
}

describe('approval updates checked against the workspace', () => {
  it("refuses a decision naming another workspace, even from a member of the item's workspace, and changes nothing", async () => {
    const [owner, member] = await Promise.all([createTestUser(h.baseUrl), createTestUser(h.baseUrl)]);
    const team = await createTeam(h.knex, owner, [[member, 'member']], 10);
    await addCredits(h.knex, { workspaceId: team.id, amount: 12, type: 'purchase', description: 'Small Project', idempotencyKey: `buy:${team.id}`, actorId: owner.id });
    const item = await seedTeamImage(h, team.id, await teamProject(h.knex, team.id), member);
    const handle = h.client.workflow.getHandle(`approval-${item.approvalId}`);
    const before = await accountSnapshot(h.knex, team.id);

    // the member's personal workspace is not the item's; nor is a pre-workspace update by the member (their id is no account of it)
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [{ userId: member.id, accountId: member.id }] }))).toBe(APPROVAL_NOT_OWNER);
    expect(await refusal(handle.executeUpdate(rejectUpdate, { args: [{ userId: member.id, accountId: member.id }] }))).toBe(APPROVAL_NOT_OWNER);
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [{ userId: member.id }] }))).toBe(APPROVAL_NOT_OWNER);
    expect(await accountSnapshot(h.knex, team.id)).toEqual(before);
    expect(await handle.query('approvalStatus')).toBe('pending');

    // named with the item's workspace, the member's decision goes through and they are its actor
    const result = await handle.executeUpdate(rejectUpdate, { args: [{ userId: member.id, accountId: team.id }] });
    expect(result.status).toBe('rejected');
    expect(await h.knex('credit_reservations').where({ id: item.reservationId }).first('status', 'metadata')).toMatchObject({
      status: 'released',
      metadata: { releasedBy: member.id, releaseReason: 'rejected' },
    });
  });

  it("decides a personal workspace's item from an update in the shape from before workspaces, the owner as actor", async () => {
    const owner = await createTestUser(h.baseUrl);
    const projectId = await teamProject(h.knex, owner.id, 'Personal project');
    const item = await seedTeamImage(h, owner.id, projectId, owner);
    const handle = h.client.workflow.getHandle(`approval-${item.approvalId}`);

    const result = await handle.executeUpdate(approveUpdate, { args: [{ userId: owner.id }] });
    expect(result.status).toBe('approved');
    const consume = await h.knex('credit_transactions').where({ workspace_id: owner.id, transaction_type: 'consume' }).first('amount', 'created_by', 'created_by_email');
    expect(consume).toEqual({ amount: -1, created_by: owner.id, created_by_email: owner.email });
    expect(await handle.result()).toBe('approved');
  });
});
