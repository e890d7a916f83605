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
