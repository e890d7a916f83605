/**
 * Texts and rules of two-factor sign-in (DESIGN.md "Accounts"): an authenticator app (TOTP, RFC 6238), passkeys
 * (WebAuthn) and recovery codes; the second step of a sign-in; a workspace's requirement. Shared by the API and the
 * front end.
 */

/** How long the second step of a sign-in may wait after the password, and how many wrong codes it takes. */
export const PENDING_SIGN_IN_TTL_MS = 5 * 60_000;
export const PENDING_SIGN_IN_MAX_FAILURES = 5;
/** A WebAuthn challenge is good this long, once. */
export const WEBAUTHN_CHALLENGE_TTL_MS = 5 * 60_000;
/** Turning two-factor sign-in off, removing a factor or making new recovery codes needs a second factor proved this recently. */
export const FRESH_SECOND_FACTOR_MS = 10 * 60_000;
export const RECOVERY_CODE_COUNT = 10;
/** TOTP codes: 6 digits a 30-second step; one step of clock drift either way is accepted. */
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DRIFT_STEPS = 1;
export const PASSKEY_NAME_MAX = 60;
export const MAX_PASSKEYS = 10;

export type SecondFactorMethod = 'totp' | 'recovery' | 'passkey';

export const TWO_FACTOR_CODES = {
  /** a workspace's owners require two-factor sign-in of its members, and this one has none */
  required: 'TWO_FACTOR_REQUIRED',
  /** the action needs a second factor proved in the last minutes (POST /api/account/two-factor/confirm) */
  freshFactorNeeded: 'SECOND_FACTOR_NEEDED',
  invalidCode: 'INVALID_SECOND_FACTOR',
  pendingInvalid: 'SIGN_IN_EXPIRED',
  alreadyOn: 'TOTP_ALREADY_SET_UP',
  setupMissing: 'TOTP_SETUP_MISSING',
  passkeyNotFound: 'PASSKEY_NOT_FOUND',
  passkeyRefused: 'PASSKEY_REFUSED',
  tooManyPasskeys: 'TOO_MANY_PASSKEYS',
  ownerNeedsTwoFactor: 'OWNER_NEEDS_TWO_FACTOR',
  personalWorkspace: 'PERSONAL_WORKSPACE',
  notEnabled: 'TWO_FACTOR_OFF',
} as const;

export const TWO_FACTOR_MSG = {
  required: (workspaceName: string) => `${workspaceName} requires two-factor sign-in. Set it up on your Security page to keep working here.`,
  freshFactorNeeded: 'Confirm with your authenticator app, a recovery code or a passkey first.',
  invalidCode: 'That code is not right. Check your authenticator app and try again.',
  pendingInvalid: 'Your sign-in has expired. Please sign in again.',
  alreadyOn: 'An authenticator app is already set up. Remove it first to set up another.',
  setupMissing: 'Start the set-up again: scan the new QR code.',
  passkeyNotFound: 'Passkey not found',
  passkeyRefused: 'That passkey could not be verified. Try again.',
  tooManyPasskeys: `You can keep at most ${MAX_PASSKEYS} passkeys. Remove one first.`,
  ownerNeedsTwoFactor: 'Set up two-factor sign-in for your own account first.',
  personalWorkspace: 'Your personal workspace is yours alone: this setting is for team workspaces.',
  notEnabled: 'Two-factor sign-in is not on.',
  passkeyNameRequired: 'Passkey name is required',
  passkeyNameTooLong: `Passkey name must be ${PASSKEY_NAME_MAX} characters or fewer`,
  codeRequired: 'Enter the code',
} as const;
