import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { NEW_PROFILE_CREDITS, type ContentType } from '../../domain/constants';
import { addCredits, reserveCredits } from '../../services/billing/credits';
import { createPersonalWorkspace } from '../../services/workspaces/personalWorkspace';

/** A users row and its profile, funded through the ledger so balance = sum of the ledger from the start. */
export async function createFundedProfile(knex: Knex, credits: number = NEW_PROFILE_CREDITS): Promise<{ id: string; email: string }> {
  const email = `credits-${randomUUID()}@example.test`;
  const [user] = await knex('users').insert({ email, password_hash: 'not-a-real-hash' }).returning(['id']);
  await createPersonalWorkspace(knex, { id: user.id, email, name: 'Ledger Test' });
  if (credits > 0) {
    await addCredits(knex, { workspaceId: user.id, amount: credits, type: 'signup_bonus', description: 'Welcome credits', idempotencyKey: `signup:${user.id}` });
  }
  return { id: user.id as string, email };
}

export async function profileRow(knex: Knex, id: string): Promise<Record<string, number>> {
  return knex('profiles').where({ id }).first();
}

const BUCKET: Record<ContentType, string> = { image: 'images', clip: 'clips', assembly: 'videos' };

export interface PendingApprovalFixture {
  userId: string;
  /** the project it belongs to; a new project when absent */
  projectId?: string;
  contentType?: ContentType;
  /** cost and remaining cost (0: a free item that only counts towards the pending cap) */
  cost?: number;
  status?: 'pending' | 'approved' | 'rejected' | 'expired';
  /** hold an active reservation of `cost` credits for it, as a generation does */
  reserve?: boolean;
}

/** A pending_approvals row (files are not stored): for the pending cap, the pending-cost rule and project deletes. */
export async function insertPendingApproval(knex: Knex, item: PendingApprovalFixture): Promise<{ id: string; projectId: string }> {
  const id = randomUUID();
  const contentType = item.contentType ?? 'image';
  const cost = item.cost ?? 0;
  const projectId = item.projectId ?? (await knex('projects').insert({ workspace_id: item.userId, name: 'Approvals' }).returning<{ id: string }[]>('id'))[0].id;
  const reservation = item.reserve ? await reserveCredits(knex, { workspaceId: item.userId, contentType, amount: cost, idempotencyKey: `fixture:${id}` }) : null;
  await knex('pending_approvals').insert({
    id,
    workspace_id: item.userId,
    project_id: projectId,
    content_type: contentType,
    status: item.status ?? 'pending',
    file_name: `pending ${contentType}`,
    original_bucket: BUCKET[contentType],
    original_path: `pending/${id}/original`,
    watermarked_bucket: BUCKET[contentType],
    watermarked_path: `pending/${id}/preview`,
    approval_deadline: new Date(Date.now() + 86_400_000),
    cost,
    remaining_cost: cost,
    reservation_id: reservation?.id ?? null,
    workflow_id: `approval-${id}`,
  });
  return { id, projectId };
}
