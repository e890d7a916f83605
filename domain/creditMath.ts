import { CREDIT_COST, ContentType, PENDING_LIMIT_MAX, PENDING_LIMIT_MIN } from './constants';

export interface CreditState {
  credits: number;
  reservedCredits: number;
}

export function availableCredits(s: CreditState): number {
  return s.credits - s.reservedCredits;
}

/** Pending-approval limit: the available credits clamped to 1..5 (DESIGN.md "Credits"). */
export function pendingApprovalLimit(available: number): number {
  return Math.min(PENDING_LIMIT_MAX, Math.max(PENDING_LIMIT_MIN, Math.floor(available)));
}

export function usageLimits(credits: number): { clips: number; images: number } {
  return { clips: Math.floor(credits / CREDIT_COST.clip), images: credits };
}

export type CanCreateReason = 'ok' | 'insufficient_credits' | 'pending_cost' | 'pending_limit' | 'cooldown';

export interface CanCreateInput {
  contentType: ContentType;
  credits: number;
  reservedCredits: number;
  pendingCount: number;
  pendingCost: number;
  cooldownUntil: Date | null;
  now: Date;
}

export interface CanCreateResult {
  canCreate: boolean;
  reason: CanCreateReason;
  cost: number;
  available: number;
  limit: number;
  pendingCount: number;
}

/** The start rule's answer with the pending items' cost (GET /api/credits/can-create). */
export interface CanCreateContentResult extends CanCreateResult {
  pendingCost: number;
}

/**
 * The start rule of DESIGN.md: refused when available < cost, when pending cost + cost > available,
 * when the pending count reached the limit, or during a rejection cooldown.
 * Taken literally from the specs: pending cost is compared with `available`, which already excludes the
 * reservations behind those approvals, so pending items weigh twice (the amber "pending approvals reserve
 * too many credits" notice is the user-visible side of this rule).
 */
export function canCreate(input: CanCreateInput): CanCreateResult {
  const cost = CREDIT_COST[input.contentType];
  const available = input.credits - input.reservedCredits;
  const limit = pendingApprovalLimit(available);
  const base = { cost, available, limit, pendingCount: input.pendingCount };
  if (input.cooldownUntil && input.cooldownUntil.getTime() > input.now.getTime()) return { ...base, canCreate: false, reason: 'cooldown' };
  if (available < cost) return { ...base, canCreate: false, reason: 'insufficient_credits' };
  if (input.pendingCost + cost > available) return { ...base, canCreate: false, reason: 'pending_cost' };
  if (input.pendingCount >= limit) return { ...base, canCreate: false, reason: 'pending_limit' };
  return { ...base, canCreate: true, reason: 'ok' };
}
