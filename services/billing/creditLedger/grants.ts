/**
 * Balance changes that add or take credits: sign-up bonus, purchases, refunds (deduct) and admin adjustments.
 */
import { DomainError } from '../../../domain/errors';
import { countText } from '../../../domain/plural';
import { InsufficientCreditsError, InvalidCreditAmountError } from './errors';
import type { CreditActor, Db, LedgerEntry } from './types';
import { type LedgerChangeFields, type LockedProfile, assertWholeCredits, changeBalance, refuseNegativeAvailable } from './ledger';

// ---------------------------------------------------------------------------------------------------------------
// Balance changes

/** `amount`: the credits to add, a positive number. */
export interface AddCreditsInput extends LedgerChangeFields {
  type: 'signup_bonus' | 'purchase' | 'add';
}

/** credits += amount; total_credits_added += amount; a purchase also counts in total_credits_purchased. */
export async function addCredits(db: Db, input: AddCreditsInput): Promise<LedgerEntry> {
  assertWholeCredits(input.amount, { allowZero: false, allowNegative: false });
  if (!['signup_bonus', 'purchase', 'add'].includes(input.type)) throw new InvalidCreditAmountError(`Unknown credit type "${input.type}"`);
  const totals: Record<string, number> = { total_credits_added: input.amount };
  if (input.type === 'purchase') totals.total_credits_purchased = input.amount;
  return changeBalance(db, { ...input, type: input.type }, () => null, totals);
}

/** `amount`: the credits to take, a positive number. */
export type DeductCreditsInput = LedgerChangeFields;

/** credits -= amount; refused when it would take available credits (credits - reserved) below zero. */
export async function deductCredits(db: Db, input: DeductCreditsInput): Promise<LedgerEntry> {
  assertWholeCredits(input.amount, { allowZero: false, allowNegative: false });
  return changeBalance(db, { ...input, amount: -input.amount, type: 'deduct' }, refuseNegativeAvailable());
}

/** `amount`: the credits a refund takes back (0 when none are available); `purchasedCredits`: how far it lowers total_credits_purchased. */
export interface RefundCreditsInput extends LedgerChangeFields {
  purchasedCredits: number;
}

/**
 * A Stripe refund in the ledger, one 'refund' row: credits -= amount (refused below available zero, like a
 * deduction) and total_credits_purchased -= purchasedCredits, never below zero, so a buyer refunded in full no longer
 * counts as having bought a package. The row is written even when nothing could be taken (amount 0): it is where
 * the refund and the lowered purchase total are recorded.
 */
export async function refundPurchasedCredits(db: Db, input: RefundCreditsInput): Promise<LedgerEntry> {
  assertWholeCredits(input.amount, { allowZero: true, allowNegative: false });
  assertWholeCredits(input.purchasedCredits, { allowZero: true, allowNegative: false });
  const { purchasedCredits, ...change } = input;
  return changeBalance(db, { ...change, amount: -input.amount, type: 'refund' }, refuseNegativeAvailable(), { total_credits_purchased: -purchasedCredits });
}

/** Credits never go below zero: a removal may take at most the user's available credits (balance - reserved). */
function refuseAdjustBelowZero(amount: number) {
  return (profile: LockedProfile, newCredits: number): DomainError | null => {
    if (newCredits >= 0 && newCredits - profile.reservedCredits >= 0) return null;
    const available = profile.credits - profile.reservedCredits;
    const held = profile.reservedCredits > 0 ? ` (balance ${profile.credits}, ${profile.reservedCredits} reserved)` : '';
    return new InsufficientCreditsError(
      `Cannot remove ${countText(Math.abs(amount), 'credit')}: the user has ${available} available${held}. Credits never go below zero.`,
    );
  };
}

export interface AdminAdjustInput {
  workspaceId: string;
  /** signed change */
  amount: number;
  reason: string;
  idempotencyKey: string;
  admin: CreditActor;
}

/** A signed correction by an admin, recorded with the admin's id and e-mail; never leaves available credits negative. */
export async function adminAdjustCredits(db: Db, input: AdminAdjustInput): Promise<LedgerEntry> {
  assertWholeCredits(input.amount, { allowZero: false, allowNegative: true });
  return changeBalance(
    db,
    {
      workspaceId: input.workspaceId,
      amount: input.amount,
      type: 'admin_adjust',
      description: input.reason,
      idempotencyKey: input.idempotencyKey,
      metadata: { reason: input.reason },
      createdBy: input.admin,
    },
    refuseAdjustBelowZero(input.amount),
  );
}
