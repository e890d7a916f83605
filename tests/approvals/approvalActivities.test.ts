import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Knex } from 'knex';
import { type CreatedPendingApproval, createApprovalActivities } from '../../activities/approvals';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { NewPendingApproval } from '../../domain/approvals';
import { MSG } from '../../domain/messages';
import { addCredits, checkAndReserve, checkLedgerInvariant, releaseReservation } from '../../services/billing/credits';
import { createStorage } from '../../storage';
import { CommentService } from '../../services/review/comments';
import { createFundedProfile } from '../support/credits';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { closeTestKnex, testKnex } from '../support/db';

const config = loadConfig();
const storage = createStorage(config);
let knex: Knex;
let activities: ReturnType<typeof createApprovalActivities>;

beforeAll(() => {
  knex = testKnex();
  activities = createApprovalActivities({ knex, config, storage, logger });
});

afterAll(async () => {
  await closeTestKnex();
});

interface Owner {
  userId: string;
  projectId: string;
}

async function owner(credits = 5, purchased = 0): Promise<Owner> {
  const profile = await createFundedProfile(knex, credits);
  if (purchased > 0) await addCredits(knex, { workspaceId: profile.id, amount: purchased, type: 'purchase', description: 'pack', idempotencyKey: `buy:${profile.id}` });
  const [project] = await knex('projects').insert({ workspace_id: profile.id, name: 'Activities' }).returning<{ id: string }[]>('id');
  return { userId: profile.id, projectId: project.id };
}

/** A pending image with its reservation and three stored files, as a generating workflow leaves it. */
async function pendingItem(o: Owner, store = true): Promise<NewPendingApproval & { files: string[] }> {
  const approvalId = randomUUID();
  const reservation = await checkAndReserve(knex, { workspaceId: o.userId, contentType: 'image', idempotencyKey: `test:${approvalId}` });
  const files = [`pending/${approvalId}/original.jpg`, `pending/${approvalId}/preview.jpg`, `pending/${approvalId}/thumb.webp`];
  for (const path of files) await storage.objects.put('images', path, Buffer.from(path));
  const item: NewPendingApproval = {
    approvalId,
    workspaceId: o.userId,
    projectId: o.projectId,
    fileName: 'edit.jpg',
    aspectRatio: '1:1',
    original: { bucket: 'images', path: files[0] },
    watermarked: { bucket: 'images', path: files[1] },
    thumbnailPath: files[2],
    reservationId: reservation.id,
    cost: 1,
    sourceJobId: null,
    metadata: {
      kind: 'image',
      originalPrompt: 'dusk',
      refinedPrompt: 'Dusk.',
      baseImageUrl: '/api/files/renders/x.png',
      format: 'square',
      width: 10,
      height: 10,
      fileSize: files[0].length,
      mime: 'image/jpeg',
      upscaled: true,
    },
  };
  if (store) await activities.createPendingApproval(item);
  return { ...item, files };
}

async function profile(userId: string): Promise<Record<string, unknown>> {
  return knex('profiles').where({ id: userId }).first('credits', 'reserved_credits', 'rejection_streak', 'rejection_cooldown_until', 'total_images_used');
}

async function exists(path: string): Promise<boolean> {
  return (await storage.objects.stat('images', path)) !== null;
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('createPendingApproval', () => {
  it('records the item once with a 7-day deadline, however often it runs', async () => {
    const o = await owner();
    const item = await pendingItem(o);
    const again = await activities.createPendingApproval(item);

    expect(again).toMatchObject({ approvalId: item.approvalId, workflowId: `approval-${item.approvalId}`, windowMs: 7 * 86_400_000 });
    const rows = await knex('pending_approvals').where({ workspace_id: o.userId });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'pending', cost: 1, remaining_cost: 1, reservation_id: item.reservationId });
    expect(Math.abs(new Date(rows[0].approval_deadline).getTime() - Date.parse(again.approvalDeadline))).toBe(0);
  });

  it('fails without retry when the project is gone', async () => {
    const o = await owner();
    const item = await pendingItem(o);
    const failure = await failureOf(activities.createPendingApproval({ ...item, approvalId: randomUUID(), projectId: randomUUID() }));
    expect(failure).toMatchObject({ type: 'PROJECT_NOT_FOUND', nonRetryable: true });
  });
});

describe('submitForApproval', () => {
  let temporal: Awaited<ReturnType<typeof testClient>>;
  beforeAll(async () => {
    temporal = await testClient();
  });
  afterAll(async () => {
    await temporal?.close();
  });

  /** Runs the activity as a worker would, with the worker's client in its context. */
  const submit = (item: NewPendingApproval, taskQueue: string): Promise<CreatedPendingApproval> =>
    new MockActivityEnvironment({}, { client: temporal.client }).run(activities.submitForApproval, { ...item, approvalWorkflow: { taskQueue, searchAttributes: [] } });

  it('records the item and starts its approval workflow; a retry finds both and starts nothing more', async () => {
    const o = await owner();
    const item = await pendingItem(o, false);
    const taskQueue = uniqueTaskQueue('submit');
    const created = await submit(item, taskQueue);

    expect(created).toMatchObject({ approvalId: item.approvalId, workflowId: `approval-${item.approvalId}`, windowMs: 7 * 86_400_000 });
    const row = await knex('pending_approvals').where({ id: item.approvalId }).first('status', 'approval_deadline');
    expect(row.status).toBe('pending');
    expect(new Date(row.approval_deadline).toISOString()).toBe(created.approvalDeadline);
    const handle = temporal.client.workflow.getHandle(created.workflowId);
    const first = await handle.describe();
    expect(first).toMatchObject({ type: 'approvalWorkflow', taskQueue, status: { name: 'RUNNING' } });
    expect(first.parentExecution).toBeUndefined();

    const again = await submit(item, taskQueue);
    expect(again).toEqual(created);
    expect((await handle.describe()).runId).toBe(first.runId);
    expect(await knex('pending_approvals').where({ workspace_id: o.userId })).toHaveLength(1);
    await handle.terminate('test done');
  });

  it('never starts the approval again once it has finished', async () => {
    const o = await owner();
    const item = await pendingItem(o, false);
    const taskQueue = uniqueTaskQueue('submit');
    const created = await submit(item, taskQueue);
    const handle = temporal.client.workflow.getHandle(created.workflowId);
    const { runId } = await handle.describe();
    await handle.terminate('closed before the retry');

    await expect(submit(item, taskQueue)).resolves.toEqual(created);
    const after = await handle.describe();
    expect(after.runId).toBe(runId);
    expect(after.status.name).toBe('TERMINATED');
  });

  it('fails without retry, starting nothing, when the project is gone', async () => {
    const o = await owner();
    const item = { ...(await pendingItem(o, false)), projectId: randomUUID() };
    const failure = await failureOf(submit(item, uniqueTaskQueue('submit')));
    expect(failure).toMatchObject({ type: 'PROJECT_NOT_FOUND', nonRetryable: true });
    await expect(temporal.client.workflow.getHandle(`approval-${item.approvalId}`).describe()).rejects.toThrow(/not found/i);
  });
});

describe('approvePendingItem', () => {
  it('charges the reservation, saves the original as an AI image and removes only the watermark; a retry changes nothing', async () => {
    const o = await owner();
    const item = await pendingItem(o);
    await knex('profiles').where({ id: o.userId }).update({ rejection_streak: 3, rejection_cooldown_until: new Date(Date.now() + 60_000) });

    const first = await activities.approvePendingItem({ approvalId: item.approvalId });
    const second = await activities.approvePendingItem({ approvalId: item.approvalId });

    expect(second).toEqual(first);
    expect(await profile(o.userId)).toMatchObject({ credits: 4, reserved_credits: 0, rejection_streak: 0, rejection_cooldown_until: null, total_images_used: 1 });
    const image = await knex('images').where({ id: first.contentId }).first();
    expect(image).toMatchObject({ project_id: o.projectId, workspace_id: o.userId, storage_bucket: 'images', storage_path: item.files[0], thumbnail_path: item.files[2], original_prompt: 'dusk', refined_prompt: 'Dusk.', upscaled: true });
    expect(await knex('credit_transactions').where({ workspace_id: o.userId, transaction_type: 'consume' })).toHaveLength(1);
    expect([await exists(item.files[0]), await exists(item.files[1]), await exists(item.files[2])]).toEqual([true, false, true]);
    expect((await checkLedgerInvariant(knex, o.userId)).ok).toBe(true);
  });

  it("moves the pending item's comment threads to the saved image, in the approval's transaction", async () => {
    const o = await owner();
    const item = await pendingItem(o);
    const actor = { workspaceId: o.userId, userId: o.userId, role: 'owner' as const };
    const thread = await new CommentService(knex).open(actor, item.approvalId, { body: 'Keep the warm light', pin: { x: 0.5, y: 0.5 } });
    expect(thread.itemKind).toBe('approval');
    const { contentId } = await activities.approvePendingItem({ approvalId: item.approvalId });
    expect(await knex('comment_threads').where({ id: thread.id }).first('item_kind', 'item_id')).toEqual({ item_kind: 'image', item_id: contentId });
    // the pending item's id still finds them: a comment sent a moment after the approval lands on the same list
    const list = await new CommentService(knex).list(o.userId, item.approvalId);
    expect([list.item, list.threads.map((t) => t.id)]).toEqual([{ kind: 'image', id: contentId }, [thread.id]]);
  });

  it('refuses an item that is no longer pending, without retry', async () => {
    const o = await owner();
    const item = await pendingItem(o);
    await activities.expirePendingItem({ approvalId: item.approvalId });
    expect(await failureOf(activities.approvePendingItem({ approvalId: item.approvalId }))).toMatchObject({ type: 'APPROVAL_NOT_PENDING', nonRetryable: true });
  });

  it('fails without retry (and saves nothing) when the reservation was already given back', async () => {
    const o = await owner();
    const item = await pendingItem(o);
    await releaseReservation(knex, { reservationId: item.reservationId!, reason: 'test' });

    const failure = await failureOf(activities.approvePendingItem({ approvalId: item.approvalId }));

    expect(failure).toMatchObject({ type: 'RESERVATION_NOT_ACTIVE', nonRetryable: true });
    expect(await knex('images').where({ project_id: o.projectId })).toEqual([]);
    expect(await knex('pending_approvals').where({ id: item.approvalId }).first('status')).toEqual({ status: 'pending' });
  });
});

describe('rejectPendingItem', () => {
  it('needs a past purchase and changes nothing without one', async () => {
    const o = await owner();
    const item = await pendingItem(o);

    const failure = await failureOf(activities.rejectPendingItem({ approvalId: item.approvalId }));

    expect(failure).toMatchObject({ type: 'REJECTION_REQUIRES_PURCHASE', message: MSG.rejectionRequiresPurchase, nonRetryable: true });
    expect(await profile(o.userId)).toMatchObject({ credits: 5, reserved_credits: 1, rejection_streak: 0 });
    expect(await knex('pending_approvals').where({ id: item.approvalId }).first('status')).toEqual({ status: 'pending' });
    expect(await exists(item.files[0])).toBe(true);
  });

  it('releases, removes every file, and counts the streak: warning at 4, cooldown at 5, then counting starts over', async () => {
    const o = await owner(5, 30);
    const answers = [];
    for (let i = 0; i < 6; i += 1) {
      const item = await pendingItem(o);
      answers.push(await activities.rejectPendingItem({ approvalId: item.approvalId }));
      for (const path of item.files) expect(await exists(path)).toBe(false);
      if (i === 4) {
        const p = await profile(o.userId);
        expect(p.rejection_streak).toBe(0);
        const until = new Date(p.rejection_cooldown_until as Date).getTime() - Date.now();
        expect(until).toBeGreaterThan(59 * 60_000);
        expect(until).toBeLessThanOrEqual(60 * 60_000);
        // the cooldown blocks the next start; lift it to go on counting
        await knex('profiles').where({ id: o.userId }).update({ rejection_cooldown_until: null });
      }
    }

    expect(answers.map((a) => a.code)).toEqual([null, null, null, 'REJECTION_STREAK_WARNING', 'REJECTION_STREAK_COOLDOWN', null]);
    expect(answers[3].warning).toBe(MSG.rejectionStreakWarning);
    expect(await profile(o.userId)).toMatchObject({ credits: 35, reserved_credits: 0, rejection_streak: 1 });
    expect(await knex('credit_transactions').where({ workspace_id: o.userId, transaction_type: 'consume' })).toEqual([]);
  });
});

describe('expirePendingItem', () => {
  it('releases the credit, marks the item expired and removes its files, once', async () => {
    const o = await owner();
    const item = await pendingItem(o);

    await activities.expirePendingItem({ approvalId: item.approvalId });
    await activities.expirePendingItem({ approvalId: item.approvalId });

    expect(await profile(o.userId)).toMatchObject({ credits: 5, reserved_credits: 0 });
    expect(await knex('pending_approvals').where({ id: item.approvalId }).first('status')).toEqual({ status: 'expired' });
    for (const path of item.files) expect(await exists(path)).toBe(false);
  });

  it('leaves an approved item as it is', async () => {
    const o = await owner();
    const item = await pendingItem(o);
    await activities.approvePendingItem({ approvalId: item.approvalId });
    await activities.expirePendingItem({ approvalId: item.approvalId });
    expect(await knex('pending_approvals').where({ id: item.approvalId }).first('status')).toEqual({ status: 'approved' });
    expect(await exists(item.files[0])).toBe(true);
  });
});

describe('decisions racing on one item', () => {
  it('never deadlock: approve and expire of the same items at once settle each item one way, with the ledger intact', async () => {
    const o = await owner(5, 30);
    const items = [];
    for (let i = 0; i < 5; i += 1) items.push(await pendingItem(o));

    const outcomes = await Promise.allSettled(
      items.flatMap((item) => [activities.approvePendingItem({ approvalId: item.approvalId }), activities.expirePendingItem({ approvalId: item.approvalId })]),
    );

    const failures = outcomes.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as ApplicationFailure).type ?? String(r.reason));
    expect(failures.every((type) => type === 'APPROVAL_NOT_PENDING')).toBe(true);
    const statuses = await knex('pending_approvals').whereIn('id', items.map((i) => i.approvalId)).select('status');
    const approved = statuses.filter((s) => s.status === 'approved').length;
    expect(approved + statuses.filter((s) => s.status === 'expired').length).toBe(5);
    expect(await profile(o.userId)).toMatchObject({ credits: 35 - approved, reserved_credits: 0 });
    expect((await checkLedgerInvariant(knex, o.userId)).ok).toBe(true);
  });
});
