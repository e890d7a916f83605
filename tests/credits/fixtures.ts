import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { NEW_PROFILE_CREDITS } from '../../domain/constants';
import { addCredits } from '../../services/credits';

/** A users row and its profile, funded through the ledger so balance = sum of the ledger from the start. */
export async function createFundedProfile(knex: Knex, credits: number = NEW_PROFILE_CREDITS): Promise<{ id: string; email: string }> {
  const email = `credits-${randomUUID()}@example.test`;
  const [user] = await knex('users').insert({ email, password_hash: 'not-a-real-hash' }).returning(['id']);
  await knex('profiles').insert({ id: user.id, email, name: 'Ledger Test' });
  if (credits > 0) {
    await addCredits(knex, { profileId: user.id, amount: credits, type: 'signup_bonus', description: 'Welcome credits', idempotencyKey: `signup:${user.id}` });
  }
  return { id: user.id as string, email };
}

export async function profileRow(knex: Knex, id: string): Promise<Record<string, number>> {
  return knex('profiles').where({ id }).first();
}

/** A pending approval of `remainingCost` credits (with the project it belongs to). */
export async function insertPendingApproval(knex: Knex, userId: string, remainingCost: number, status = 'pending'): Promise<void> {
  const [project] = await knex('projects').insert({ user_id: userId, name: 'Approvals' }).returning(['id']);
  await knex('pending_approvals').insert({
    user_id: userId,
    project_id: project.id,
    content_type: 'image',
    status,
    file_name: 'a.png',
    original_bucket: 'images',
    original_path: 'a.png',
    watermarked_bucket: 'images',
    watermarked_path: 'a-wm.png',
    approval_deadline: new Date(Date.now() + 86400000),
    cost: remainingCost,
    remaining_cost: remainingCost,
    workflow_id: `approval-${randomUUID()}`,
  });
}
