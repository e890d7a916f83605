/**
 * The start rule (DESIGN.md "Credits"): whether a generation may start, and the reservation taken under the same lock.
 */
import type { Knex } from 'knex';
import { type ContentType } from '../../../domain/constants';
import { canCreate, type CanCreateContentResult } from '../../../domain/creditMath';
import { DomainError } from '../../../domain/errors';
import { InsufficientCreditsError, PendingLimitReachedError, ProfileNotFoundError, RejectionCooldownError } from './errors';
import type { Db, ReservationResult } from './types';
import { UUID_RE, assertContentType, assertKey } from './ledger';
import { type ReserveCreditsInput, reserveUnderLock } from './reservations';

/**
 * What counts as pending for the start rule: items waiting in the approval queue and not past their deadline
 * (an expired item's reservation is released by its workflow), plus generations in flight (an active reservation
 * no pending approval holds yet). Counting the in-flight ones is what keeps two simultaneous starts from both
 * passing the pending-limit check. The approval stats read the same columns (`getPendingUsage`).
 */
function pendingUsageColumns(db: Db): Knex.Raw[] {
  const inFlight =
    "from credit_reservations r where r.workspace_id = p.id and r.status = 'active' and not exists (select 1 from pending_approvals a where a.reservation_id = r.id)";
  const queued = "from pending_approvals a where a.workspace_id = p.id and a.status = 'pending' and a.approval_deadline > now()";
  return [
    db.raw(`(select count(*) ${queued}) + (select count(*) ${inFlight}) as pending_count`),
    db.raw(`(select coalesce(sum(a.remaining_cost), 0) ${queued}) + (select coalesce(sum(r.amount), 0) ${inFlight}) as pending_cost`),
    db.raw(`(select count(*) ${queued}) as queued_count`),
    db.raw(`(select coalesce(sum(a.remaining_cost), 0) ${queued}) as queued_cost`),
  ];
}

interface StartRuleRow {
  credits: number;
  reserved_credits: number;
  rejection_cooldown_until: Date | null;
  pending_count: string;
  pending_cost: string;
  queued_count: string;
  queued_cost: string;
}

function applyStartRule(row: StartRuleRow, contentType: ContentType, now: Date): CanCreateContentResult {
  const pendingCount = Number(row.pending_count);
  const pendingCost = Number(row.pending_cost);
  const result = canCreate({
    contentType,
    credits: row.credits,
    reservedCredits: row.reserved_credits,
    pendingCount,
    pendingCost,
    cooldownUntil: row.rejection_cooldown_until,
    now,
  });
  return { ...result, pendingCost };
}

async function readStartRuleRow(db: Db, workspaceId: string): Promise<StartRuleRow> {
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const row: StartRuleRow | undefined = await db('profiles as p')
    .where('p.id', workspaceId)
    .first('p.credits', 'p.reserved_credits', 'p.rejection_cooldown_until', ...pendingUsageColumns(db));
  if (!row) throw new ProfileNotFoundError();
  return row;
}

/** The start rule of DESIGN.md for one more item of `contentType`, from the profile and its pending approvals. */
export async function canCreateContent(db: Db, workspaceId: string, contentType: ContentType, now: Date = new Date()): Promise<CanCreateContentResult> {
  assertContentType(contentType);
  return applyStartRule(await readStartRuleRow(db, workspaceId), contentType, now);
}

/**
 * The start rule as it will stand once one pending item is rejected (its reservation of `releasedCredits` released,
 * its place in the queue freed): what "request changes" asks before it rejects, so a refusal leaves everything as it was.
 */
export async function canCreateAfterRelease(db: Db, workspaceId: string, contentType: ContentType, releasedCredits: number, now: Date = new Date()): Promise<CanCreateContentResult> {
  assertContentType(contentType);
  const row = await readStartRuleRow(db, workspaceId);
  return applyStartRule(
    {
      ...row,
      reserved_credits: Math.max(0, Number(row.reserved_credits) - releasedCredits),
      pending_count: String(Math.max(0, Number(row.pending_count) - 1)),
      pending_cost: String(Math.max(0, Number(row.pending_cost) - releasedCredits)),
    },
    contentType,
    now,
  );
}

export interface PendingUsage {
  /** what the start rule counts: the queue and the generations in flight */
  pendingCount: number;
  pendingCost: number;
  limit: number;
  /** the approval queue alone (what the Approvals view lists, and the badge counts) */
  queuedCount: number;
  queuedCost: number;
}

/** The pending count, its cost and the limit exactly as the start rule counts them, and the queue's part (the approval stats). */
export async function getPendingUsage(db: Db, workspaceId: string): Promise<PendingUsage> {
  const row = await readStartRuleRow(db, workspaceId);
  const { pendingCount, pendingCost, limit } = applyStartRule(row, 'image', new Date());
  return { pendingCount, pendingCost, limit, queuedCount: Number(row.queued_count), queuedCost: Number(row.queued_cost) };
}

/** The refusal a failed start rule answers with. */
function startRefusal(check: CanCreateContentResult, cooldownUntil: Date | null): DomainError {
  switch (check.reason) {
    case 'cooldown':
      return new RejectionCooldownError(cooldownUntil);
    case 'pending_limit':
      return new PendingLimitReachedError(check.limit);
    default:
      return new InsufficientCreditsError();
  }
}

export interface CheckAndReserveInput extends ReserveCreditsInput {
  /** the clock the cooldown is compared with (tests) */
  now?: Date;
}

/**
 * Starts one generated item: applies the start rule and reserves its cost under the same profile row lock, so
 * concurrent starts are judged one after another, each seeing the others' reservations. Idempotent on the key:
 * a repeated key returns the earlier reservation without judging again (its item may be pending by now).
 * Refusals: InsufficientCreditsError (also when pending items hold the credits needed), PendingLimitReachedError,
 * RejectionCooldownError.
 */
export async function checkAndReserve(db: Db, input: CheckAndReserveInput): Promise<ReservationResult> {
  assertKey(input.idempotencyKey);
  assertContentType(input.contentType);
  if (!UUID_RE.test(input.workspaceId)) throw new ProfileNotFoundError();
  const now = input.now ?? new Date();
  // judged only when the key is new, after the lock: a repeated key replays (or conflicts) exactly as reserveCredits does
  return reserveUnderLock(db, input, async (trx) => {
    const row = await readStartRuleRow(trx, input.workspaceId);
    const check = applyStartRule(row, input.contentType, now);
    if (!check.canCreate) throw startRefusal(check, row.rejection_cooldown_until);
  });
}
