/**
 * Accounts for the capacity benchmark, in bulk: the clip rule "one clip at a time per workspace" means 1000 clips in
 * flight need 1000 workspaces. Each is what sign-up makes (a users row, its personal workspace, membership and
 * profile, the same inserts as services/workspaces/personalWorkspace.ts) funded through the ledger (addCredits, so
 * balance = ledger sum from the start), with one project and one render stored in the bench's storage, as an upload
 * leaves them. Batched inserts: a sign-up through the API hashes a password (scrypt), which would take minutes here
 * and is not what is measured.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import sharp from 'sharp';
import { addCredits } from '../../services/billing/credits';
import { fileUrl, type Storage } from '../../storage';

export interface CapacityAccount {
  userId: string;
  projectId: string;
  renderId: string;
}

/** A 1280 x 720 stand-in for a render (a JPEG of about 30 KB). */
export async function renderJpeg(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1280" height="720" viewBox="0 0 480 270">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3d85c6"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="480" height="190" fill="url(#s)"/><rect y="190" width="480" height="80" fill="#38761d"/>
    <rect x="40" y="90" width="120" height="110" fill="#e6e0d4"/><rect x="300" y="60" width="140" height="140" fill="#990000"/>
    <rect x="330" y="90" width="30" height="30" fill="#ffd966"/><rect x="380" y="90" width="30" height="30" fill="#ffd966"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 88 }).toBuffer();
}

async function inBatches<T>(items: readonly T[], size: number, run: (batch: T[]) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await run(items.slice(i, i + size));
}

/** Runs `work` over `items` with at most `limit` at once. */
export async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index], index);
    }
  });
  await Promise.all(lanes);
}

export async function createCapacityAccounts(knex: Knex, storage: Storage, count: number, credits: number, label: string): Promise<CapacityAccount[]> {
  const jpeg = await renderJpeg();
  const rows = Array.from({ length: count }, () => ({ id: randomUUID(), projectId: randomUUID(), renderId: randomUUID(), email: `capacity-${label}-${randomUUID()}@example.test` }));
  await inBatches(rows, 500, async (batch) => {
    await knex.transaction(async (trx) => {
      await trx('users').insert(batch.map((r) => ({ id: r.id, email: r.email, password_hash: 'capacity-bench-no-sign-in' })));
      await trx('workspaces').insert(batch.map((r) => ({ id: r.id, name: 'Personal', personal_user_id: r.id, created_by: r.id })));
      await trx('workspace_members').insert(batch.map((r) => ({ workspace_id: r.id, user_id: r.id, role: 'owner' })));
      await trx('profiles').insert(batch.map((r) => ({ id: r.id, email: r.email, name: 'Capacity Bench' })));
      await trx('projects').insert(batch.map((r) => ({ id: r.projectId, workspace_id: r.id, name: 'Capacity bench' })));
    });
  });
  await eachLimited(rows, 8, async (r) => {
    await addCredits(knex, { workspaceId: r.id, amount: credits, type: 'signup_bonus', description: 'Capacity bench credits', idempotencyKey: `signup:${r.id}` });
    const storagePath = `${r.id}/capacity-render.jpg`;
    await storage.objects.put('renders', storagePath, jpeg);
    await knex('renders').insert({
      id: r.renderId,
      project_id: r.projectId,
      workspace_id: r.id,
      file_url: fileUrl('renders', storagePath),
      file_name: 'capacity-render.jpg',
      file_size: jpeg.length,
      width: 1280,
      height: 720,
      aspect_ratio: '16:9',
      checksum: `capacity-${r.renderId}`,
      storage_bucket: 'renders',
      storage_path: storagePath,
      storage_mime: 'image/jpeg',
      storage_size: jpeg.length,
    });
  });
  return rows.map((r) => ({ userId: r.id, projectId: r.projectId, renderId: r.renderId }));
}
