/**
 * Expected refusals of the credit ledger, each with a status for the API and a code for clients and workflows.
 */
import { DomainError } from '../../../domain/errors';
import { ERROR_CODES, MSG } from '../../../domain/messages';
import { type ReservationStatus } from '../../../db/models/CreditReservation';

// ---------------------------------------------------------------------------------------------------------------
// Errors: expected refusals, each with a status for the API and a code for clients and workflows.

export class InsufficientCreditsError extends DomainError {
  constructor(message = 'Insufficient credits') {
    super(400, ERROR_CODES.insufficientCredits, message);
  }
}

export class ProfileNotFoundError extends DomainError {
  constructor() {
    super(404, 'PROFILE_NOT_FOUND', 'User not found');
  }
}

export class ReservationNotFoundError extends DomainError {
  constructor() {
    super(404, 'RESERVATION_NOT_FOUND', 'Credit reservation not found');
  }
}

/** Consuming a reservation that was already released (rejected or expired item). */
export class ReservationNotActiveError extends DomainError {
  constructor(
    readonly reservationId: string,
    readonly reservationStatus: ReservationStatus,
  ) {
    super(409, 'RESERVATION_NOT_ACTIVE', `Credit reservation ${reservationId} was ${reservationStatus} and cannot be consumed`);
  }
}

/** An idempotency key reused for a different change (other profile, type or amount). */
export class IdempotencyConflictError extends DomainError {
  constructor(key: string) {
    super(409, 'IDEMPOTENCY_CONFLICT', `Idempotency key "${key}" was already used for a different credit change`);
  }
}

export class InvalidCreditAmountError extends DomainError {
  constructor(message: string) {
    super(400, 'INVALID_AMOUNT', message);
  }
}

/** The pending-approval count reached the limit (the whole available credits, pending items' holds included, clamped to 1..5). */
export class PendingLimitReachedError extends DomainError {
  constructor(readonly limit: number) {
    super(409, ERROR_CODES.pendingLimitReached, MSG.pendingLimitReached(limit));
  }
}

/** A rejection streak started a cooldown: nothing new may start until it ends or an approval clears it. */
export class RejectionCooldownError extends DomainError {
  constructor(readonly until: Date | null) {
    super(429, ERROR_CODES.rejectionStreakCooldown, MSG.rejectionStreakCooldown);
  }
}
