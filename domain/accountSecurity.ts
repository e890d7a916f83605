/**
 * Texts and rules of account security (DESIGN.md "Accounts"): password reset, e-mail verification and change, and
 * the sessions a person has open. Shared by the API and the front end.
 */

/** How long a link stays good. */
export const PASSWORD_RESET_TTL_MS = 60 * 60_000;
export const EMAIL_VERIFICATION_TTL_MS = 24 * 60 * 60_000;

/** A session's last_seen_at is written at most this often. */
export const SESSION_SEEN_EVERY_MS = 60_000;

export const ACCOUNT_SECURITY_CODES = {
  emailNotVerified: 'EMAIL_NOT_VERIFIED',
  linkInvalid: 'LINK_INVALID',
  alreadyVerified: 'ALREADY_VERIFIED',
  sessionNotFound: 'SESSION_NOT_FOUND',
} as const;

export const ACCOUNT_SECURITY_MSG = {
  /** the answer to every reset request, whether or not the address has an account */
  resetRequested: 'If an account exists for that address, we have sent it a link to choose a new password. The link works for one hour.',
  passwordResetDone: 'Your password has been changed. Every session has been signed out: sign in with the new password.',
  linkInvalid: 'This link is invalid or has expired. Ask for a new one.',
  emailVerified: 'Your e-mail address is verified.',
  emailNotVerified: 'Verify your e-mail address first: open the link we sent to it (your dashboard can send it again).',
  verificationSent: 'We sent a verification link to your e-mail address.',
  alreadyVerified: 'Your e-mail address is already verified.',
  emailChangeSent: (email: string) => `We sent a link to ${email}. Your address changes when you open it.`,
  emailChanged: 'Your e-mail address has been changed.',
  sameEmail: 'That is already your e-mail address.',
  banner: 'Please verify your e-mail address: we sent you a link. Until then you cannot join other workspaces or receive e-mail from Render Studio.',
  sessionNotFound: 'Session not found',
  currentSession: 'Use Sign out to end the session you are using.',
} as const;
