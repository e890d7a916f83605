import { CREDIT_COST, ContentType, PENDING_LIMIT_MAX, PENDING_LIMIT_MIN } from './constants';

export interface CreditState {
  credits: number;
  reservedCredits: number;
}

export function availableCredits(s: CreditState): number {
  return s.credits - s.reservedCredits;
}

/** Pending-approval limit: the whole available credits (pending items' holds included) clamped to 1..5 (DESIGN.md "Credits"). */
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
 * The start rule of DESIGN.md "Credits". `available` already excludes the reservations behind pending items, so
 * each pending item is counted once: refused when available < cost, when the pending count has reached the
 * limit, or during a rejection cooldown. The limit is the user's whole available credits, the pending items'
 * holds included (available + pendingCost), clamped to 1..5: 5 credits allow 5 pending images.
 * A refusal for cost is 'pending_cost' when the credits pending items hold would cover it (the amber
 * "pending approvals reserve too many credits" notice), else 'insufficient_credits'.
 */
export function canCreate(input: CanCreateInput): CanCreateResult {
  const cost = CREDIT_COST[input.contentType];
  const available = input.credits - input.reservedCredits;
  const limit = pendingApprovalLimit(available + input.pendingCost);
  const base = { cost, available, limit, pendingCount: input.pendingCount };
  if (input.cooldownUntil && input.cooldownUntil.getTime() > input.now.getTime()) return { ...base, canCreate: false, reason: 'cooldown' };
  if (available < cost) return { ...base, canCreate: false, reason: available + input.pendingCost >= cost ? 'pending_cost' : 'insufficient_credits' };
  if (input.pendingCount >= limit) return { ...base, canCreate: false, reason: 'pending_limit' };
  return { ...base, canCreate: true, reason: 'ok' };
}

/** GET /api/credits/summary's answer (also inside the admin's user detail). */
export interface CreditSummary {
  credits: number;
  reservedCredits: number;
  availableCredits: number;
  totalClipsUsed: number;
  totalImagesUsed: number;
  totalAssembliesUsed: number;
  totalCreditsPurchased: number;
  totalCreditsAdded: number;
}
