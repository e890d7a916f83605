/**
 * Accounts seeded with plain inserts on the schema from before workspaces (every table that holds an account's rows,
 * with a funded ledger and active reservations), and the numbers a migration must keep: balance, reserved credits,
 * ledger sum, active reservations and row counts per table. Used by the migration tests of the workspaces
 * (tests/workspaces/migration.test.ts) and of the id column names (tests/db/workspaceIdRename.test.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** The owning-account column of every table that holds an account's rows (before and after the migration). */
export const OWNED_BY: Readonly<Record<string, string>> = {
  projects: 'user_id',
  renders: 'user_id',
  images: 'user_id',
  clips: 'user_id',
  compiled_videos: 'user_id',
  generated_content: 'user_id',
  aesthetic_chats: 'user_id',
  video_generation_jobs: 'user_id',
  ai_image_edits: 'user_id',
  assembly_jobs: 'user_id',
  pending_approvals: 'user_id',
  drafts: 'user_id',
  draft_jobs: 'user_id',
  draft_uploads: 'user_id',
  credit_purchases: 'user_id',
  data_exports: 'user_id',
  user_events: 'user_id',
  resumable_uploads: 'user_id',
  content_lineage: 'user_id',
  credit_transactions: 'profile_id',
  credit_reservations: 'profile_id',
  sessions: 'user_id',
};

export interface AccountNumbers {
  credits: number;
  reserved: number;
  ledgerSum: number;
  activeReservations: number;
  rows: Record<string, number>;
}

/**
 * `columnOf` names each table's owning-account column in the schema being read: OWNED_BY's names before the id column
 * rename, `workspace_id` after it (sessions keep `user_id`).
 */
export async function numbersOf(knex: Knex, accountId: string, columnOf: (table: string) => string = (table) => OWNED_BY[table]): Promise<AccountNumbers> {
  const profile = await knex('profiles').where({ id: accountId }).first('credits', 'reserved_credits');
  const ledger = await knex('credit_transactions').where(columnOf('credit_transactions'), accountId).sum<{ s: string | null }>('amount as s').first();
  const active = await knex('credit_reservations').where(columnOf('credit_reservations'), accountId).where({ status: 'active' }).sum<{ s: string | null }>('amount as s').first();
  const rows: Record<string, number> = {};
  for (const table of Object.keys(OWNED_BY)) {
    const counted = await knex(table).where(columnOf(table), accountId).count<{ n: string }>('* as n').first();
    rows[table] = Number(counted?.n ?? 0);
  }
  const draftImages = await knex('draft_images').join('drafts', 'drafts.id', 'draft_images.draft_id').where(`drafts.${columnOf('drafts')}`, accountId).count<{ n: string }>('* as n').first();
  rows.draft_images = Number(draftImages?.n ?? 0);
  return {
    credits: profile.credits,
    reserved: profile.reserved_credits,
    ledgerSum: Number(ledger?.s ?? 0),
    activeReservations: Number(active?.s ?? 0),
    rows,
  };
}

/** One ledger row, keeping balance_after and profiles.credits in step as the ledger service does. */
export async function ledger(knex: Knex, profileId: string, amount: number, type: string, extra: Record<string, unknown> = {}): Promise<void> {
  const [{ credits }] = await knex('profiles').where({ id: profileId }).increment('credits', amount).returning('credits');
  await knex('credit_transactions').insert({
    profile_id: profileId,
    amount,
    balance_after: credits,
    transaction_type: type,
    description: `${type} ${amount}`,
    idempotency_key: `seed:${randomUUID()}`,
    ...extra,
  });
}

async function reserve(knex: Knex, profileId: string, contentType: 'image' | 'clip' | 'assembly', amount: number, status: 'active' | 'consumed' | 'released'): Promise<string> {
  const [row] = await knex('credit_reservations')
    .insert({ profile_id: profileId, content_type: contentType, amount, status, idempotency_key: `seed:${randomUUID()}`, settled_at: status === 'active' ? null : knex.fn.now() })
    .returning('id');
  if (status === 'active') await knex('profiles').where({ id: profileId }).increment('reserved_credits', amount);
  return row.id;
}

/**
 * A user with `scale` of everything, through plain inserts that satisfy the schema of the step before the
 * workspaces migration: the ledger funds the balance (balance = ledger sum), active reservations make up `reserved`.
 */
export async function seedUser(knex: Knex, n: number, scale: number): Promise<string> {
  const email = `migrated-${n}-${randomUUID()}@example.test`;
  const [{ id: userId }] = await knex('users').insert({ email, password_hash: 'not-a-real-hash' }).returning('id');
  await knex('profiles').insert({ id: userId, email, name: `Migrated ${n}` });
  await knex('sessions').insert({ id: `seed-${randomUUID()}`, user_id: userId, expires_at: new Date(Date.now() + 86_400_000) });
  await ledger(knex, userId, 5, 'signup_bonus');
  for (let p = 0; p < scale; p++) {
    const sessionId = `cs_seed_${randomUUID()}`;
    await knex('credit_purchases').insert({ user_id: userId, package_id: 'pro', credits: 100, amount_cents: 4900, stripe_session_id: sessionId, status: 'completed', completed_at: knex.fn.now() });
    await ledger(knex, userId, 100, 'purchase', { reference_id: sessionId });
  }
  await knex('credit_purchases').insert({ user_id: userId, package_id: 'starter', credits: 20, amount_cents: 900, stripe_session_id: `cs_seed_${randomUUID()}`, status: 'open' });
  await ledger(knex, userId, -(scale + 1), 'consume');
  await ledger(knex, userId, 2, 'refund');

  for (let p = 0; p < scale; p++) {
    const [{ id: projectId }] = await knex('projects').insert({ user_id: userId, name: `Project ${n}.${p}`, address: `${p} Main St` }).returning('id');
    const base = { project_id: projectId, user_id: userId };
    const renderIds: string[] = [];
    for (let r = 0; r < 2; r++) {
      const [{ id }] = await knex('renders')
        .insert({ ...base, file_url: `/api/files/renders/${userId}/${randomUUID()}.png`, file_name: `r${r}.png`, aspect_ratio: '16:9', checksum: randomUUID() })
        .returning('id');
      renderIds.push(id);
    }
    const [{ id: imageId }] = await knex('images').insert({ ...base, file_url: `/api/files/images/${userId}/${randomUUID()}.png`, file_name: 'edit.png', original_prompt: 'brighter' }).returning('id');
    const [{ id: clipId }] = await knex('clips').insert({ ...base, render_id: renderIds[0], file_url: `/api/files/clips/${userId}/${randomUUID()}.mp4`, file_name: 'clip.mp4', credits_used: 1 }).returning('id');
    await knex('generated_content').insert({ ...base, render_id: renderIds[1], content_type: 'image', file_url: `/api/files/images/${userId}/${randomUUID()}.png`, file_name: 'old.png' });
    await knex('content_lineage').insert({ user_id: userId, item_kind: 'clip', item_id: clipId, source_kind: 'render', source_id: renderIds[0] });
    await knex('aesthetic_chats').insert({ project_id: projectId, user_id: userId, chat_history: JSON.stringify([{ role: 'user', content: 'hi' }]) });
    await knex('video_generation_jobs').insert({ ...base, render_id: renderIds[0], status: 'completed', progress: 100, workflow_id: `clip-${randomUUID()}` });
    await knex('video_generation_jobs').insert({ ...base, image_id: imageId, status: 'processing', progress: 40, workflow_id: `clip-${randomUUID()}` });
    await knex('ai_image_edits').insert({ ...base, workflow_id: `image-edit-${randomUUID()}`, original_image_url: '/x.png', edit_prompt: 'warmer', status: 'completed' });
    const [{ id: assemblyId }] = await knex('assembly_jobs')
      .insert({ ...base, platform: 'instagram', clip_ids: [clipId], status: 'completed', workflow_id: `assembly-${randomUUID()}` })
      .returning('id');
    await knex('compiled_videos').insert({ ...base, file_url: `/api/files/videos/${userId}/${randomUUID()}.mp4`, file_name: 'reel.mp4', clip_ids: [clipId], workflow_id: `assembly-out-${randomUUID()}`, assembly_job_id: assemblyId });
    await knex('resumable_uploads').insert({ id: randomUUID().replace(/-/g, ''), user_id: userId, project_id: projectId, file_name: 'big.png', size: 1000, status: 'uploading' });
    // one pending approval holding an active reservation, one decided
    const reservationId = await reserve(knex, userId, 'clip', 3, 'active');
    for (const [status, reservation] of [['pending', reservationId], ['approved', null]] as const) {
      await knex('pending_approvals').insert({
        ...base,
        content_type: 'clip',
        status,
        file_name: 'pending.mp4',
        original_bucket: 'clips',
        original_path: `pending/${randomUUID()}/original`,
        watermarked_bucket: 'clips',
        watermarked_path: `pending/${randomUUID()}/preview`,
        approval_deadline: new Date(Date.now() + 86_400_000),
        cost: 3,
        remaining_cost: status === 'pending' ? 3 : 0,
        reservation_id: reservation,
        workflow_id: `approval-${randomUUID()}`,
      });
    }
  }
  await reserve(knex, userId, 'image', 1, 'active');
  await reserve(knex, userId, 'image', 1, 'released');
  await reserve(knex, userId, 'clip', 3, 'consumed');

  const [{ id: draftId }] = await knex('drafts').insert({ user_id: userId, name: `Draft ${n}` }).returning('id');
  const [{ id: draftImageId }] = await knex('draft_images').insert({ draft_id: draftId, name: 'a.png', source_url: '/api/files/drafts/a.png' }).returning('id');
  await knex('draft_images').insert({ draft_id: draftId, name: 'b.png', source_url: '/api/files/drafts/b.png' });
  await knex('draft_jobs').insert({ draft_id: draftId, draft_image_id: draftImageId, user_id: userId, model_id: 'm', mode: 'edit_render', status: 'completed', workflow_id: `draft-job-${randomUUID()}`, credits_charged: 1 });
  await knex('draft_uploads').insert({ id: randomUUID(), user_id: userId, draft_id: draftId, purpose: 'image', bucket: 'drafts', path: `${userId}/${randomUUID()}.png` });
  await knex('data_exports').insert({ user_id: userId, sequence: 1, workflow_id: `export-${userId}-1`, status: 'completed' });
  await knex('user_events').insert({ user_id: userId, payload: JSON.stringify({ type: 'credits' }) });
  return userId;
}
