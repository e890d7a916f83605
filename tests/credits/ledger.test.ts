import type { Knex } from 'knex';
import { closeTestKnex, testKnex } from '../support/db';
import {
  IdempotencyConflictError,
  InsufficientCreditsError,
  InvalidCreditAmountError,
  ProfileNotFoundError,
  ReservationNotActiveError,
  ReservationNotFoundError,
  addCredits,
  adminAdjustCredits,
  canCreateContent,
  checkLedgerInvariant,
  consumeReservation,
  deductCredits,
  getCreditSummary,
  getUsageLimits,
  listTransactions,
  releaseReservation,
  reserveCredits,
} from '../../services/billing/credits';
import { createFundedProfile, insertPendingApproval, profileRow } from '../support/credits';

let knex: Knex;

beforeAll(() => {
  knex = testKnex();
});

afterAll(async () => {
  await closeTestKnex();
});

async function ledgerRows(workspaceId: string): Promise<Array<Record<string, unknown>>> {
  return knex('credit_transactions').where({ workspace_id: workspaceId }).orderBy('created_at');
}

describe('addCredits', () => {
  it('adds to the balance and the totals, with creator "system" by default', async () => {
    const p = await createFundedProfile(knex);
    const entry = await addCredits(knex, { workspaceId: p.id, amount: 12, type: 'purchase', description: 'Small Project', idempotencyKey: `stripe:${p.id}` });
    expect(entry).toMatchObject({ amount: 12, balanceAfter: 17, transactionType: 'purchase', createdByEmail: 'system', replayed: false });
    expect(await getCreditSummary(knex, p.id)).toEqual({
      credits: 17,
      reservedCredits: 0,
      availableCredits: 17,
      totalClipsUsed: 0,
      totalImagesUsed: 0,
      totalAssembliesUsed: 0,
      totalCreditsPurchased: 12,
      totalCreditsAdded: 17,
    });
  });

  it('counts a plain add in totalCreditsAdded but not in totalCreditsPurchased', async () => {
    const p = await createFundedProfile(knex);
    await addCredits(knex, { workspaceId: p.id, amount: 3, type: 'add', description: 'Goodwill', idempotencyKey: `goodwill:${p.id}` });
    const s = await getCreditSummary(knex, p.id);
    expect([s.credits, s.totalCreditsAdded, s.totalCreditsPurchased]).toEqual([8, 8, 0]);
  });

  it('changes nothing for a repeated idempotency key and returns the earlier entry', async () => {
    const p = await createFundedProfile(knex);
    const input = { workspaceId: p.id, amount: 30, type: 'purchase' as const, description: 'Medium', idempotencyKey: `evt:${p.id}` };
    const first = await addCredits(knex, input);
    const again = await addCredits(knex, input);
    expect(again.id).toBe(first.id);
    expect(again.replayed).toBe(true);
    expect((await profileRow(knex, p.id)).credits).toBe(35);
    expect((await profileRow(knex, p.id)).total_credits_purchased).toBe(30);
    expect(await ledgerRows(p.id)).toHaveLength(2);
  });

  it('writes once when the same key arrives concurrently', async () => {
    const p = await createFundedProfile(knex);
    const input = { workspaceId: p.id, amount: 4, type: 'add' as const, description: 'Webhook', idempotencyKey: `race:${p.id}` };
    const results = await Promise.all(Array.from({ length: 8 }, () => addCredits(knex, input)));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect((await profileRow(knex, p.id)).credits).toBe(9);
  });

  it('refuses a key already used for a different change', async () => {
    const p = await createFundedProfile(knex);
    const other = await createFundedProfile(knex);
    await addCredits(knex, { workspaceId: p.id, amount: 2, type: 'add', description: 'x', idempotencyKey: `k:${p.id}` });
    await expect(addCredits(knex, { workspaceId: p.id, amount: 3, type: 'add', description: 'x', idempotencyKey: `k:${p.id}` })).rejects.toBeInstanceOf(
      IdempotencyConflictError,
    );
    await expect(addCredits(knex, { workspaceId: other.id, amount: 2, type: 'add', description: 'x', idempotencyKey: `k:${p.id}` })).rejects.toBeInstanceOf(
      IdempotencyConflictError,
    );
    expect((await profileRow(knex, other.id)).credits).toBe(5);
  });

  it('refuses zero, negative and fractional amounts and unknown profiles', async () => {
    const p = await createFundedProfile(knex);
    for (const amount of [0, -1, 1.5]) {
      await expect(addCredits(knex, { workspaceId: p.id, amount, type: 'add', description: 'x', idempotencyKey: `bad:${amount}:${p.id}` })).rejects.toBeInstanceOf(
        InvalidCreditAmountError,
      );
    }
    await expect(
      addCredits(knex, { workspaceId: '00000000-0000-4000-8000-000000000000', amount: 1, type: 'add', description: 'x', idempotencyKey: `nobody:${p.id}` }),
    ).rejects.toBeInstanceOf(ProfileNotFoundError);
    await expect(addCredits(knex, { workspaceId: 'not-a-uuid', amount: 1, type: 'add', description: 'x', idempotencyKey: `bad-id:${p.id}` })).rejects.toBeInstanceOf(
      ProfileNotFoundError,
    );
    expect(await ledgerRows(p.id)).toHaveLength(1);
  });

  it('runs inside a caller transaction and a refusal leaves that transaction usable', async () => {
    const p = await createFundedProfile(knex);
    await knex.transaction(async (trx) => {
      await addCredits(trx, { workspaceId: p.id, amount: 2, type: 'add', description: 'in trx', idempotencyKey: `trx-a:${p.id}` });
      await expect(deductCredits(trx, { workspaceId: p.id, amount: 100, description: 'too much', idempotencyKey: `trx-b:${p.id}` })).rejects.toBeInstanceOf(
        InsufficientCreditsError,
      );
      await addCredits(trx, { workspaceId: p.id, amount: 1, type: 'add', description: 'still usable', idempotencyKey: `trx-c:${p.id}` });
    });
    expect((await profileRow(knex, p.id)).credits).toBe(8);
  });
});

describe('deductCredits', () => {
  it('takes credits and records a negative ledger row', async () => {
    const p = await createFundedProfile(knex);
    const entry = await deductCredits(knex, { workspaceId: p.id, amount: 2, description: 'Manual charge', idempotencyKey: `deduct:${p.id}` });
    expect(entry).toMatchObject({ amount: -2, balanceAfter: 3, transactionType: 'deduct' });
    expect((await profileRow(knex, p.id)).credits).toBe(3);
  });

  it('refuses to take reserved credits (available would go negative)', async () => {
    const p = await createFundedProfile(knex);
    await reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', idempotencyKey: `clip:${p.id}` });
    const refusal = deductCredits(knex, { workspaceId: p.id, amount: 2, description: 'x', idempotencyKey: `deduct:${p.id}` });
    await expect(refusal).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS', status: 400, message: 'Insufficient credits' });
    expect(await profileRow(knex, p.id)).toMatchObject({ credits: 5, reserved_credits: 4 });
    expect(await ledgerRows(p.id)).toHaveLength(1);
  });
});

describe('adminAdjustCredits', () => {
  it("records the admin's id and e-mail as the creator", async () => {
    const p = await createFundedProfile(knex);
    const admin = await createFundedProfile(knex, 0);
    const entry = await adminAdjustCredits(knex, { workspaceId: p.id, amount: -3, reason: 'Refund reversal', idempotencyKey: `adj:${p.id}`, admin });
    expect(entry).toMatchObject({ amount: -3, balanceAfter: 2, transactionType: 'admin_adjust', createdBy: admin.id, createdByEmail: admin.email });
    const row = await knex('credit_transactions').where({ id: entry.id }).first();
    expect(row).toMatchObject({ created_by: admin.id, created_by_email: admin.email, description: 'Refund reversal' });
  });

  it('refuses an adjustment that would leave a negative balance', async () => {
    const p = await createFundedProfile(knex);
    const admin = await createFundedProfile(knex, 0);
    await expect(adminAdjustCredits(knex, { workspaceId: p.id, amount: -6, reason: 'x', idempotencyKey: `adj:${p.id}`, admin })).rejects.toBeInstanceOf(
      InsufficientCreditsError,
    );
    expect((await profileRow(knex, p.id)).credits).toBe(5);
  });
});

describe('reserveCredits', () => {
  it('holds the content type cost and reduces available credits', async () => {
    const p = await createFundedProfile(knex);
    const r = await reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', idempotencyKey: `clip-1:${p.id}` });
    expect(r).toMatchObject({ amount: 4, status: 'active', contentType: 'clip', replayed: false });
    const image = await reserveCredits(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `image-1:${p.id}` });
    expect(image.amount).toBe(1);
    const assembly = await reserveCredits(knex, { workspaceId: p.id, contentType: 'assembly', idempotencyKey: `asm-1:${p.id}` });
    expect(assembly.amount).toBe(0);
    expect(await getCreditSummary(knex, p.id)).toMatchObject({ credits: 5, reservedCredits: 5, availableCredits: 0 });
  });

  it("refuses with 'Insufficient credits' when available is below the amount", async () => {
    const p = await createFundedProfile(knex, 3);
    await expect(reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', idempotencyKey: `clip:${p.id}` })).rejects.toMatchObject({
      message: 'Insufficient credits',
      code: 'INSUFFICIENT_CREDITS',
    });
    expect(await knex('credit_reservations').where({ workspace_id: p.id })).toHaveLength(0);
    expect((await profileRow(knex, p.id)).reserved_credits).toBe(0);
  });

  it('returns the earlier reservation for a repeated key and holds nothing more', async () => {
    const p = await createFundedProfile(knex);
    const first = await reserveCredits(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `wf:${p.id}` });
    const again = await reserveCredits(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `wf:${p.id}` });
    expect(again).toMatchObject({ id: first.id, replayed: true });
    expect((await profileRow(knex, p.id)).reserved_credits).toBe(1);
    await expect(reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', idempotencyKey: `wf:${p.id}` })).rejects.toBeInstanceOf(
      IdempotencyConflictError,
    );
  });
});

describe('releaseReservation', () => {
  it('releases once; a second release changes nothing', async () => {
    const p = await createFundedProfile(knex);
    const r = await reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', idempotencyKey: `c:${p.id}` });
    const released = await releaseReservation(knex, { reservationId: r.id, reason: 'rejected' });
    expect(released).toMatchObject({ status: 'released', replayed: false });
    expect(released.settledAt).toBeInstanceOf(Date);
    const again = await releaseReservation(knex, { reservationId: r.id });
    expect(again).toMatchObject({ status: 'released', replayed: true });
    expect(await profileRow(knex, p.id)).toMatchObject({ credits: 5, reserved_credits: 0 });
    expect((await knex('credit_reservations').where({ id: r.id }).first()).metadata).toEqual({ releaseReason: 'rejected' });
  });

  it('leaves a consumed reservation consumed', async () => {
    const p = await createFundedProfile(knex);
    const r = await reserveCredits(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `i:${p.id}` });
    await consumeReservation(knex, { reservationId: r.id, description: 'Approved image' });
    const after = await releaseReservation(knex, { reservationId: r.id });
    expect(after).toMatchObject({ status: 'consumed', replayed: true });
    expect(await profileRow(knex, p.id)).toMatchObject({ credits: 4, reserved_credits: 0 });
  });
});

describe('consumeReservation', () => {
  it('charges the reservation, counts the usage and records the business figures', async () => {
    const p = await createFundedProfile(knex);
    const r = await reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', idempotencyKey: `clip:${p.id}` });
    const { reservation, transaction } = await consumeReservation(knex, { reservationId: r.id, description: 'Approved clip', metadata: { approvalId: 'a1' } });
    expect(reservation.status).toBe('consumed');
    expect(transaction).toMatchObject({
      amount: -4,
      balanceAfter: 1,
      transactionType: 'consume',
      idempotencyKey: `consume:${r.id}`,
      referenceId: r.id,
      metadata: { approvalId: 'a1', contentType: 'clip', creditCost: 4, rejectionCost: 75, realMoneyCost: 0.989, creditValue: 0.132 },
    });
    expect(await getCreditSummary(knex, p.id)).toMatchObject({ credits: 1, reservedCredits: 0, totalClipsUsed: 1, totalImagesUsed: 0 });
  });

  it('changes nothing when consumed twice', async () => {
    const p = await createFundedProfile(knex);
    const r = await reserveCredits(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `img:${p.id}` });
    const first = await consumeReservation(knex, { reservationId: r.id, description: 'Approved' });
    const again = await consumeReservation(knex, { reservationId: r.id, description: 'Approved' });
    expect(again.transaction.id).toBe(first.transaction.id);
    expect(again.transaction.replayed).toBe(true);
    expect(await getCreditSummary(knex, p.id)).toMatchObject({ credits: 4, reservedCredits: 0, totalImagesUsed: 1 });
    expect(await ledgerRows(p.id)).toHaveLength(2);
  });

  it('refuses to consume a released reservation', async () => {
    const p = await createFundedProfile(knex);
    const r = await reserveCredits(knex, { workspaceId: p.id, contentType: 'clip', idempotencyKey: `clip:${p.id}` });
    await releaseReservation(knex, { reservationId: r.id, reason: 'expired' });
    const attempt = consumeReservation(knex, { reservationId: r.id, description: 'late approval' });
    await expect(attempt).rejects.toBeInstanceOf(ReservationNotActiveError);
    await expect(consumeReservation(knex, { reservationId: r.id, description: 'late approval' })).rejects.toMatchObject({ code: 'RESERVATION_NOT_ACTIVE' });
    expect(await getCreditSummary(knex, p.id)).toMatchObject({ credits: 5, reservedCredits: 0, totalClipsUsed: 0 });
  });

  it('answers not found for an unknown or malformed reservation id', async () => {
    for (const reservationId of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      await expect(consumeReservation(knex, { reservationId, description: 'x' })).rejects.toBeInstanceOf(ReservationNotFoundError);
      await expect(releaseReservation(knex, { reservationId })).rejects.toMatchObject({ status: 404, code: 'RESERVATION_NOT_FOUND' });
    }
  });

  it('records a free assembly as a zero-credit consume', async () => {
    const p = await createFundedProfile(knex);
    const r = await reserveCredits(knex, { workspaceId: p.id, contentType: 'assembly', idempotencyKey: `asm:${p.id}` });
    const { transaction } = await consumeReservation(knex, { reservationId: r.id, description: 'Approved video' });
    expect(transaction).toMatchObject({ amount: 0, balanceAfter: 5, metadata: { rejectionCost: 20, realMoneyCost: 0.25 } });
    expect((await getCreditSummary(knex, p.id)).totalAssembliesUsed).toBe(1);
  });
});

describe('reads', () => {
  it('derives usage limits from credits', async () => {
    const p = await createFundedProfile(knex, 9);
    expect(await getUsageLimits(knex, p.id)).toEqual({ clips: 2, images: 9 });
  });

  it('lists transactions 50 a page, newest first, with the creator e-mail', async () => {
    const p = await createFundedProfile(knex);
    const admin = await createFundedProfile(knex, 0);
    for (let i = 1; i <= 54; i += 1) {
      await addCredits(knex, { workspaceId: p.id, amount: i, type: 'add', description: `add ${i}`, idempotencyKey: `list:${p.id}:${i}` });
    }
    await adminAdjustCredits(knex, { workspaceId: p.id, amount: 1, reason: 'last', idempotencyKey: `list-adj:${p.id}`, admin });
    const first = await listTransactions(knex, p.id, 1);
    expect(first).toMatchObject({ page: 1, pageSize: 50, total: 56 });
    expect(first.transactions).toHaveLength(50);
    expect(first.transactions[0]).toMatchObject({ transactionType: 'admin_adjust', description: 'last', createdByEmail: admin.email });
    expect(first.transactions[1]).toMatchObject({ description: 'add 54', createdByEmail: 'system' });
    expect(Object.keys(first.transactions[0]).sort()).toEqual(
      ['amount', 'createdAt', 'createdByEmail', 'description', 'id', 'metadata', 'referenceId', 'transactionType'].sort(),
    );
    const second = await listTransactions(knex, p.id, 2);
    expect(second.transactions.map((t) => t.description)).toEqual(['add 5', 'add 4', 'add 3', 'add 2', 'add 1', 'Welcome credits']);
    await expect(listTransactions(knex, p.id, 0)).rejects.toMatchObject({ status: 400 });
  });

  it('pages by cursor: the same rows as by page number, a row added meanwhile moves nothing, the first total carried', async () => {
    const p = await createFundedProfile(knex);
    for (let i = 1; i <= 119; i += 1) {
      await addCredits(knex, { workspaceId: p.id, amount: 1, type: 'add', description: `add ${i}`, idempotencyKey: `walk:${p.id}:${i}` });
    }
    const byNumber = await Promise.all([1, 2, 3].map((n) => listTransactions(knex, p.id, n)));
    expect(byNumber.map((page) => page.transactions.length)).toEqual([50, 50, 20]);
    const first = byNumber[0];
    expect(first.nextCursor).toEqual(expect.any(String));
    // a row written after the first page is newer than every row the walk goes on to
    await addCredits(knex, { workspaceId: p.id, amount: 1, type: 'add', description: 'late', idempotencyKey: `walk-late:${p.id}` });
    const second = await listTransactions(knex, p.id, { cursor: first.nextCursor as string });
    expect(second).toMatchObject({ page: 2, pageSize: 50, total: 120 });
    expect(second.transactions.map((t) => t.id)).toEqual(byNumber[1].transactions.map((t) => t.id));
    const third = await listTransactions(knex, p.id, { cursor: second.nextCursor as string });
    expect(third).toMatchObject({ page: 3, total: 120, nextCursor: null });
    expect(third.transactions.map((t) => t.id)).toEqual(byNumber[2].transactions.map((t) => t.id));
    expect(third.transactions[third.transactions.length - 1].description).toBe('Welcome credits');
    // rows written in one millisecond keep their order: created_at is compared to the microsecond, then by id
    expect(new Set([...first.transactions, ...second.transactions, ...third.transactions].map((t) => t.id)).size).toBe(120);

    const other = await createFundedProfile(knex);
    for (const cursor of ['', 'not a cursor', Buffer.from('[1,2,3]').toString('base64url'), first.nextCursor as string]) {
      // the last: a real cursor, but of another account's ledger
      await expect(listTransactions(knex, other.id, { cursor })).rejects.toMatchObject({ status: 400 });
    }
  });

  it('applies the start rule with pending approvals and the cooldown', async () => {
    const p = await createFundedProfile(knex, 4);
    expect(await canCreateContent(knex, p.id, 'clip')).toMatchObject({ canCreate: true, reason: 'ok', cost: 4, available: 4, limit: 4, pendingCount: 0, pendingCost: 0 });
    await insertPendingApproval(knex, { userId: p.id, cost: 1, reserve: true });
    await insertPendingApproval(knex, { userId: p.id, cost: 1, status: 'approved' });
    // 3 available: the pending item holds the fourth credit the clip needs
    expect(await canCreateContent(knex, p.id, 'clip')).toMatchObject({ canCreate: false, reason: 'pending_cost', available: 3, limit: 4, pendingCount: 1, pendingCost: 1 });
    expect(await canCreateContent(knex, p.id, 'image')).toMatchObject({ canCreate: true, pendingCount: 1 });
    const until = new Date(Date.now() + 60_000);
    await knex('profiles').where({ id: p.id }).update({ rejection_cooldown_until: until });
    expect(await canCreateContent(knex, p.id, 'image')).toMatchObject({ canCreate: false, reason: 'cooldown' });
    expect(await canCreateContent(knex, p.id, 'image', new Date(until.getTime() + 1))).toMatchObject({ canCreate: true });
  });

  it('reports a balance that does not match the ledger', async () => {
    const p = await createFundedProfile(knex);
    await reserveCredits(knex, { workspaceId: p.id, contentType: 'image', idempotencyKey: `inv:${p.id}` });
    expect(await checkLedgerInvariant(knex, p.id)).toEqual({ balance: 5, ledgerSum: 5, reserved: 1, activeReservationsSum: 1, ok: true });
    await knex('profiles').where({ id: p.id }).update({ credits: 6 });
    expect(await checkLedgerInvariant(knex, p.id)).toMatchObject({ balance: 6, ledgerSum: 5, ok: false });
    await knex('profiles').where({ id: p.id }).update({ credits: 5, reserved_credits: 2 });
    expect(await checkLedgerInvariant(knex, p.id)).toMatchObject({ reserved: 2, activeReservationsSum: 1, ok: false });
  });
});
