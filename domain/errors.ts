/**
 * Base class for expected business refusals raised below the API (services, activities).
 * The API's error middleware answers them with `status` and `{ success: false, error, code }`;
 * workflows see the same `code` through ApplicationFailure types.
 */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A refusal this server's configuration decides (a service that is not set up here, a package it will not sell):
 * answered with its status (503), but nothing failed, so the API logs it at warn without a stack. Whatever made the
 * configuration wrong is logged where it is found (at start, by the readiness check).
 */
export class UnavailableHereError extends DomainError {}

/** No account has the given e-mail (admin look-ups and the `npm run admin` command). */
export class UserNotFoundError extends DomainError {
  constructor(readonly email?: string) {
    super(404, 'USER_NOT_FOUND', email === undefined ? 'User not found' : `No account with the e-mail ${email}`);
  }
}
