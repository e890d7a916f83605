import knexFactory, { type Knex } from 'knex';
import { knexConfig } from '../../db/connection';
import {
  InsufficientCreditsError,
  ReservationNotActiveError,
  addCredits,
  checkLedgerInvariant,
  consumeReservation,
  deductCredits,
  releaseReservation,
  reserveCredits,
  type ReservationResult,
} from '../../services/billing/credits';
import { createFundedProfile } from '../support/credits';

// a pool as wide as the storm, so the operations really meet at the profile row lock rather than in the pool queue;
// no statement timeout: however busy the machine, each waits its turn at the lock
const POOL = 70;
let knex: Knex;

beforeAll(() => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set');
  knex = knexFactory(knexConfig(url, { min: 0, max: POOL }, { queryTimeoutMs: 0 }));
});

afterAll(async () => {
  await knex.destroy();
});

/** Every ledger row's balance_after is the previous one plus its amount: the writes were serialised. */
async function expectRunningBalance(workspaceId: string): Promise<void> {
  const rows: Array<{ amount: number; balance_after: number }> = await knex('credit_transactions')
    .where({ workspace_id: workspaceId })
    .orderBy([{ column: 'created_at' }, { column: 'balance_after', order: 'desc' }])
    .select('amount', 'balance_after');
  let running = 0;
  for (const row of rows) {
    running += row.amount;
    expect(row.balance_after).toBe(running);
  }
}

async function directSqlState(workspaceId: string): Promise<{ credits: number; reserved: number; ledgerSum: number; activeSum: number }> {
  const { rows } = await knex.raw(
    `select p.credits, p.reserved_credits,
            (select coalesce(sum(amount), 0)::int from credit_transactions where workspace_id = p.id) as ledger_sum,
            (select coalesce(sum(amount), 0)::int from credit_reservations where workspace_id = p.id and status = 'active') as active_sum
       from profiles p where p.id = ?`,
    [workspaceId],
  );
  const r = rows[0];
  return { credits: r.credits, reserved: r.reserved_credits, ledgerSum: r.ledger_sum, activeSum: r.active_sum };
}

type Outcome = { kind: string; result: PromiseSettledResult<unknown> };

describe('credit ledger under a concurrent storm', () => {
  it('keeps balance = sum of ledger and reserved = sum of active reservations through 70 parallel operations', async () => {
    const p = await createFundedProfile(knex, 100);
    // reservations settled during the storm: 8 clips (32) and 8 images (8)
    const prepared: ReservationResult[] = [];
    for (let i = 0; i < 16; i += 1) {
      prepared.push(await reserveCredits(knex, { workspaceId: p.id, contentType: i % 2 ? 'image' : 'clip', idempotencyKey: `pre:${p.id}:${i}` }));
    }

    const ops: Array<{ kind: string; run: () => Promise<unknown> }> = [];
    for (let i = 0; i < 20; i += 1) {
      ops.push({ kind: 'reserve', run: () => reserveCredits(knex, { workspaceId: p.id, contentType: i % 2 ? 'image' : 'clip', idempotencyKey: `new:${p.id}:${i}` }) });
    }
    for (let i = 0; i < 5; i += 1) {
      ops.push({ kind: 'reserve-repeat', run: () => reserveCredits(knex, { workspaceId: p.id, contentType: i % 2 ? 'image' : 'clip', idempotencyKey: `new:${p.id}:${i}` }) });
    }
    ops.push({ kind: 'reserve-too-much', run: () => reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', amount: 10_000, idempotencyKey: `huge:${p.id}` }) });
    for (let i = 0; i < 8; i += 1) ops.push({ kind: 'consume', run: () => consumeReservation(knex, { reservationId: prepared[i].id, description: 'storm approve' }) });
    for (let i = 0; i < 4; i += 1) ops.push({ kind: 'consume-repeat', run: () => consumeReservation(knex, { reservationId: prepared[i].id, description: 'storm approve' }) });
    for (let i = 8; i < 14; i += 1) ops.push({ kind: 'release', run: () => releaseReservation(knex, { reservationId: prepared[i].id, reason: 'storm reject' }) });
    for (let i = 8; i < 10; i += 1) ops.push({ kind: 'release-repeat', run: () => releaseReservation(knex, { reservationId: prepared[i].id }) });
    // approve and reject racing on the same item: exactly one of them settles it
    for (const i of [14, 15]) {
      ops.push({ kind: 'race-consume', run: () => consumeReservation(knex, { reservationId: prepared[i].id, description: 'race approve' }) });
      ops.push({ kind: 'race-release', run: () => releaseReservation(knex, { reservationId: prepared[i].id, reason: 'race reject' }) });
    }
    for (let i = 0; i < 10; i += 1) {
      ops.push({ kind: 'add', run: () => addCredits(knex, { workspaceId: p.id, amount: 3, type: 'add', description: 'storm add', idempotencyKey: `add:${p.id}:${i}` }) });
    }
    for (let i = 0; i < 3; i += 1) {
      ops.push({ kind: 'add-repeat', run: () => addCredits(knex, { workspaceId: p.id, amount: 3, type: 'add', description: 'storm add', idempotencyKey: `add:${p.id}:${i}` }) });
    }
    for (let i = 0; i < 5; i += 1) {
      ops.push({ kind: 'deduct', run: () => deductCredits(knex, { workspaceId: p.id, amount: 1, description: 'storm deduct', idempotencyKey: `deduct:${p.id}:${i}` }) });
    }
    expect(ops.length).toBeGreaterThanOrEqual(50);

    const settled = await Promise.allSettled(ops.map((op) => op.run()));
    const outcomes: Outcome[] = settled.map((result, i) => ({ kind: ops[i].kind, result }));
    const failures = outcomes.filter((o) => o.result.status === 'rejected');

    // the only refusals allowed: the oversized reservation, and the losing side of an approve/reject race
    for (const f of failures) {
      const reason = (f.result as PromiseRejectedResult).reason;
      if (f.kind === 'reserve-too-much') expect(reason).toBeInstanceOf(InsufficientCreditsError);
      else if (f.kind === 'race-consume') expect(reason).toBeInstanceOf(ReservationNotActiveError);
      else throw reason;
    }
    expect(failures.some((f) => f.kind === 'reserve-too-much')).toBe(true);

    const statuses = await knex('credit_reservations').whereIn('id', prepared.map((r) => r.id)).pluck('status');
    expect(statuses.filter((s: string) => s === 'active')).toHaveLength(0);

    const invariant = await checkLedgerInvariant(knex, p.id);
    expect(invariant.ok).toBe(true);
    const sql = await directSqlState(p.id);
    expect(sql.credits).toBe(sql.ledgerSum);
    expect(sql.reserved).toBe(sql.activeSum);
    expect(sql.credits).toBeGreaterThanOrEqual(0);
    expect(sql.reserved).toBeGreaterThanOrEqual(0);
    expect(sql.reserved).toBeLessThanOrEqual(sql.credits);

    // exact figures: 100 + 10 adds of 3 - 5 deducts of 1 - what was consumed
    const consumed: Array<{ amount: number }> = await knex('credit_reservations').where({ workspace_id: p.id, status: 'consumed' }).select('amount');
    const consumedSum = consumed.reduce((s, r) => s + r.amount, 0);
    expect(sql.credits).toBe(100 + 30 - 5 - consumedSum);
    // 20 new reservations (10 clips, 10 images) still active; repeats created nothing
    expect(sql.reserved).toBe(10 * 4 + 10 * 1);
    expect(await knex('credit_reservations').where({ workspace_id: p.id }).count({ n: '*' }).first()).toEqual({ n: '36' });
    expect(await knex('credit_transactions').where({ workspace_id: p.id }).count({ n: '*' }).first()).toEqual({ n: String(1 + 10 + 5 + consumed.length) });
    await expectRunningBalance(p.id);
  });

  it('never over-reserves when many reservations compete for too few credits', async () => {
    const p = await createFundedProfile(knex, 10);
    const attempts = Array.from({ length: 50 }, (_, i) =>
      reserveCredits(knex, { workspaceId: p.id, contentType: i % 5 === 0 ? 'image' : 'clip', idempotencyKey: `tight:${p.id}:${i}` }),
    );
    const settled = await Promise.allSettled(attempts);
    for (const s of settled) {
      if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(InsufficientCreditsError);
    }
    const granted = settled.filter((s): s is PromiseFulfilledResult<ReservationResult> => s.status === 'fulfilled').map((s) => s.value);
    const held = granted.reduce((sum, r) => sum + r.amount, 0);
    // had any credit been left, every 1-credit image request would have been granted, taking all 10: so exactly 10 are held
    expect(held).toBe(10);
    expect(granted.length).toBeLessThan(50);
    expect(await directSqlState(p.id)).toEqual({ credits: 10, reserved: held, ledgerSum: 10, activeSum: held });

    // now settle them all concurrently, half approved and half rejected
    await Promise.all(
      granted.map((r, i) => (i % 2 ? releaseReservation(knex, { reservationId: r.id }) : consumeReservation(knex, { reservationId: r.id, description: 'ok' }))),
    );
    const invariant = await checkLedgerInvariant(knex, p.id);
    expect(invariant).toMatchObject({ ok: true, reserved: 0, activeReservationsSum: 0 });
    expect(invariant.balance).toBe(10 - granted.filter((_, i) => i % 2 === 0).reduce((s, r) => s + r.amount, 0));
    await expectRunningBalance(p.id);
  });
});
