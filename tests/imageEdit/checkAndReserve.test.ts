import type { Knex } from 'knex';
import {
  InsufficientCreditsError,
  PendingLimitReachedError,
  RejectionCooldownError,
  canCreateContent,
  checkAndReserve,
  checkLedgerInvariant,
  releaseReservation,
} from '../../services/billing/credits';
import { createFundedProfile, insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';

let knex: Knex;

beforeAll(() => {
  knex = testKnex();
});

afterAll(async () => {
  await closeTestKnex();
});

describe('checkAndReserve', () => {
  it('judges simultaneous starts one after another, each seeing the others in flight: 5 credits admit exactly 5 images', async () => {
    const p = await createFundedProfile(knex, 5);

    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `start:${p.id}:${i}` })),
    );

    // each in-flight item is counted once: 5 available, then 4 with 1 in flight ... then 0 available
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    const refusals = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason);
    expect(refusals).toHaveLength(5);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(InsufficientCreditsError);
    expect(await checkLedgerInvariant(knex, p.id)).toMatchObject({ balance: 5, reserved: 5, ok: true });
    expect(await canCreateContent(knex, p.id, 'image')).toMatchObject({ canCreate: false, reason: 'pending_cost', pendingCount: 5, pendingCost: 5, available: 0, limit: 5 });
  });

  it('lets only one start through at the pending cap, however many arrive together', async () => {
    const p = await createFundedProfile(knex, 5);
    // four free items (assemblies cost 0) fill all but one place under the cap of 5
    for (let i = 0; i < 4; i += 1) await insertPendingApproval(knex, { userId: p.id, contentType: 'assembly' });

    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `cap:${p.id}:${i}` })),
    );

    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refusals = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as PendingLimitReachedError);
    expect(refusals.every((r) => r instanceof PendingLimitReachedError)).toBe(true);
    expect(refusals[0]).toMatchObject({ status: 409, code: 'PENDING_LIMIT_REACHED', message: 'You have reached the maximum of 5 pending approvals...' });
  });

  it('replays a repeated key without judging again, even once the start rule would now refuse', async () => {
    const p = await createFundedProfile(knex, 1);
    const first = await checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `wf:${p.id}` });
    const again = await checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `wf:${p.id}` });

    expect(again).toMatchObject({ id: first.id, replayed: true });
    await expect(checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `other:${p.id}` })).rejects.toBeInstanceOf(InsufficientCreditsError);
    expect(await checkLedgerInvariant(knex, p.id)).toMatchObject({ reserved: 1, ok: true });
  });

  it('refuses during a cooldown and admits again once it has passed', async () => {
    const p = await createFundedProfile(knex, 5);
    const until = new Date(Date.now() + 60_000);
    await knex('profiles').where({ id: p.id }).update({ rejection_cooldown_until: until });

    await expect(checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `cd:${p.id}` })).rejects.toMatchObject({
      constructor: RejectionCooldownError,
      status: 429,
      code: 'REJECTION_STREAK_COOLDOWN',
    });
    const later = await checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `cd:${p.id}`, now: new Date(until.getTime() + 1) });
    expect(later.replayed).toBe(false);
  });

  it('counts a released reservation as neither pending nor reserved', async () => {
    const p = await createFundedProfile(knex, 1);
    const r = await checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `a:${p.id}` });
    await releaseReservation(knex, { reservationId: r.id });
    expect(await canCreateContent(knex, p.id, 'image')).toMatchObject({ canCreate: true, pendingCount: 0, pendingCost: 0 });
    await expect(checkAndReserve(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `b:${p.id}` })).resolves.toMatchObject({ status: 'active' });
  });
});
