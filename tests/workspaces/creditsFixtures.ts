/**
 * Fixtures for the shared-credits tests (tests/workspaces/credits*.test.ts, sharedCredits.test.ts): a team
 * workspace written straight into the tables the workspaces service writes (workspace, members, its account row),
 * funded through the ledger, and pending items made the way a generation ends (start rule and reservation by the
 * starting member, files in storage, the pending row, the approval workflow).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import sharp from 'sharp';
import type { WorkspaceRole } from '../../domain/workspaceRoles';
import { WORKSPACE_HEADER } from '../../domain/workspaceRoles';
import { approvalWorkflowId, type NewPendingApproval } from '../../domain/approvals';
import { addCredits, checkAndReserve } from '../../services/billing/credits';
import { approvalWorkflow } from '../../workflows';
import type { TestUser } from '../support/accounts';
import { renderBytes, type Harness } from '../imageEdit/harness';

export interface Team {
  id: string;
  owner: TestUser;
}

/** A team workspace owned by `owner`, with `members` in their roles and `credits` added through the ledger. */
export async function createTeam(knex: Knex, owner: TestUser, members: Array<[TestUser, Exclude<WorkspaceRole, 'owner'>]>, credits: number): Promise<Team> {
  const id = randomUUID();
  const name = `Team ${id.slice(0, 6)}`;
  await knex.transaction(async (trx) => {
    await trx('workspaces').insert({ id, name, personal_user_id: null, created_by: owner.id });
    await trx('workspace_members').insert([
      { workspace_id: id, user_id: owner.id, role: 'owner' },
      ...members.map(([user, role]) => ({ workspace_id: id, user_id: user.id, role })),
    ]);
    await trx('profiles').insert({ id, email: owner.email, name, credits: 0 });
  });
  if (credits > 0) {
    await addCredits(knex, { workspaceId: id, amount: credits, type: 'add', description: 'Team credits', idempotencyKey: `team-fund:${id}`, actorId: owner.id });
  }
  return { id, owner };
}

export function inTeam(teamId: string): Record<string, string> {
  return { [WORKSPACE_HEADER]: teamId };
}

export async function teamProject(knex: Knex, teamId: string, name = 'Shared Listing'): Promise<string> {
  const [row] = await knex('projects').insert({ workspace_id: teamId, name }).returning<{ id: string }[]>('id');
  return row.id;
}

export interface TeamItem {
  approvalId: string;
  reservationId: string;
}

/**
 * A pending image of the workspace started by `starter`: the start rule and reservation (recording the starter),
 * its files, the pending row (created_by the starter) and its approval workflow on the harness's approvals queue.
 */
export async function seedTeamImage(h: Harness, teamId: string, projectId: string, starter: TestUser): Promise<TeamItem> {
  const approvalId = randomUUID();
  const reservation = await checkAndReserve(h.knex, { workspaceId: teamId, contentType: 'image', idempotencyKey: `team-seed:${approvalId}`, actorId: starter.id });
  const folder = `pending/${approvalId}`;
  const original = await sharp(await renderBytes(160, 160)).jpeg().toBuffer();
  const files = { original: `${folder}/original.jpg`, watermarked: `${folder}/preview.jpg`, thumbnail: `${folder}/thumb.webp` };
  await h.storage.objects.put('images', files.original, original);
  await h.storage.objects.put('images', files.watermarked, await sharp(original).negate().jpeg().toBuffer());
  await h.storage.objects.put('images', files.thumbnail, await sharp(original).resize(64).webp().toBuffer());
  const item: NewPendingApproval = {
    approvalId,
    workspaceId: teamId,
    createdBy: starter.id,
    projectId,
    fileName: 'team - AI edit.jpg',
    aspectRatio: '1:1',
    original: { bucket: 'images', path: files.original },
    watermarked: { bucket: 'images', path: files.watermarked },
    thumbnailPath: files.thumbnail,
    reservationId: reservation.id,
    cost: 1,
    sourceJobId: null,
    metadata: {
      kind: 'image',
      originalPrompt: 'team seeded',
      refinedPrompt: 'team seeded',
      baseImageUrl: '/api/files/renders/seed.png',
      format: 'square',
      width: 160,
      height: 160,
      fileSize: original.length,
      mime: 'image/jpeg',
      upscaled: false,
    },
  };
  const created = await h.activities.createPendingApproval(item);
  await h.client.workflow.start(approvalWorkflow, {
    taskQueue: h.queues.approvals,
    workflowId: approvalWorkflowId(approvalId),
    args: [{ approvalId, workspaceId: teamId, windowMs: created.windowMs }],
  });
  return { approvalId, reservationId: reservation.id };
}

/** What a refused call must leave as it was: the balance, the ledger, the reservations and the pending rows. */
export async function accountSnapshot(knex: Knex, accountId: string): Promise<Record<string, unknown>> {
  const profile = await knex('profiles').where({ id: accountId }).first('credits', 'reserved_credits', 'total_credits_purchased', 'rejection_streak');
  const ledger = await knex('credit_transactions').where({ workspace_id: accountId }).orderBy('id').select('id', 'amount', 'created_by');
  const reservations = await knex('credit_reservations').where({ workspace_id: accountId }).orderBy('id').select('id', 'status', 'amount');
  const approvals = await knex('pending_approvals').where({ workspace_id: accountId }).orderBy('id').select('id', 'status', 'remaining_cost');
  const purchases = await knex('credit_purchases').where({ workspace_id: accountId }).orderBy('id').select('id', 'status');
  return { profile, ledger, reservations, approvals, purchases };
}
