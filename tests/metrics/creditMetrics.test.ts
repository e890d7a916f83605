import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { addCredits, consumeReservation, deductCredits, releaseReservation, reserveCredits } from '../../services/billing/credits';
import { creditsAddedTotal, creditsConsumedTotal, creditsDeductedTotal, creditsReleasedTotal, creditsReservedTotal } from '../../services/platform/metrics';
import { createFundedProfile } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { seriesValue } from './metricValues';

let knex: Knex;

beforeAll(() => {
  knex = testKnex();
});

afterAll(async () => {
  await closeTestKnex();
});

async function movements(contentType = 'image'): Promise<{ reserved: number; consumed: number; released: number }> {
  const labels = { content_type: contentType };
  return {
    reserved: await seriesValue(creditsReservedTotal, labels),
    consumed: await seriesValue(creditsConsumedTotal, labels),
    released: await seriesValue(creditsReleasedTotal, labels),
  };
}

describe('credit ledger metrics', () => {
  it('count reserved, consumed and released credits once each, and nothing for an idempotent replay', async () => {
    const profile = await createFundedProfile(knex, 10);
    const before = await movements('clip');

    const kept = await reserveCredits(knex, { workspaceId: profile.id, contentType: 'clip', idempotencyKey: `kept:${randomUUID()}` });
    expect(await movements('clip')).toEqual({ ...before, reserved: before.reserved + kept.amount });
    const replayed = await reserveCredits(knex, { workspaceId: profile.id, contentType: 'clip', idempotencyKey: kept.idempotencyKey });
    expect(replayed.replayed).toBe(true);
    expect(await movements('clip')).toEqual({ ...before, reserved: before.reserved + kept.amount });

    await consumeReservation(knex, { reservationId: kept.id, description: 'approved clip' });
    await consumeReservation(knex, { reservationId: kept.id, description: 'approved clip' });
    const given = await reserveCredits(knex, { workspaceId: profile.id, contentType: 'clip', idempotencyKey: `given:${randomUUID()}` });
    await releaseReservation(knex, { reservationId: given.id, reason: 'generation_failed' });
    await releaseReservation(knex, { reservationId: given.id, reason: 'generation_failed' });

    expect(await movements('clip')).toEqual({
      reserved: before.reserved + kept.amount + given.amount,
      consumed: before.consumed + kept.amount,
      released: before.released + given.amount,
    });
  });

  it('count balance changes by ledger type, once per idempotency key', async () => {
    const profile = await createFundedProfile(knex, 0);
    const added = await seriesValue(creditsAddedTotal, { type: 'purchase' });
    const deducted = await seriesValue(creditsDeductedTotal, { type: 'deduct' });
    const purchase = { workspaceId: profile.id, amount: 7, type: 'purchase' as const, description: 'Small Project', idempotencyKey: `purchase:${randomUUID()}` };
    await addCredits(knex, purchase);
    await addCredits(knex, purchase);
    const deduction = { workspaceId: profile.id, amount: 2, description: 'correction', idempotencyKey: `deduct:${randomUUID()}` };
    await deductCredits(knex, deduction);
    await deductCredits(knex, deduction);
    expect(await seriesValue(creditsAddedTotal, { type: 'purchase' })).toBe(added + 7);
    expect(await seriesValue(creditsDeductedTotal, { type: 'deduct' })).toBe(deducted + 2);
  });

  it("count nothing when the caller's transaction rolls back, and count at the caller's commit", async () => {
    const profile = await createFundedProfile(knex, 10);
    const before = await movements();
    await expect(
      knex.transaction(async (trx) => {
        await reserveCredits(trx, { workspaceId: profile.id, contentType: 'image', idempotencyKey: `undone:${randomUUID()}` });
        throw new Error('the caller gives up');
      }),
    ).rejects.toThrow('the caller gives up');
    expect(await movements()).toEqual(before);

    let insideCaller: number | null = null;
    await knex.transaction(async (trx) => {
      await reserveCredits(trx, { workspaceId: profile.id, contentType: 'image', idempotencyKey: `kept:${randomUUID()}` });
      insideCaller = await seriesValue(creditsReservedTotal, { content_type: 'image' });
    });
    expect(insideCaller).toBe(before.reserved);
    expect(await movements()).toEqual({ ...before, reserved: before.reserved + 1 });
  });

  it('count nothing for a refused change', async () => {
    const profile = await createFundedProfile(knex, 0);
    const before = await movements();
    await expect(reserveCredits(knex, { workspaceId: profile.id, contentType: 'image', idempotencyKey: `refused:${randomUUID()}` })).rejects.toThrow();
    expect(await movements()).toEqual(before);
  });
});
