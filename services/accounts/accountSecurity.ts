/**
 * Password reset, e-mail verification and e-mail change (DESIGN.md "Accounts"). Links are one-time account tokens
 * (./accountTokens.ts). A reset request does the same work whether or not the address has an account and sends its
 * e-mail after the answer, so neither the answer nor its timing tells who has an account.
 */
import type { Knex } from 'knex';
import { UniqueViolationError } from 'objection';
import { DomainError } from '../../domain/errors';
import { refuseWhereSsoRequired, ssoRequirementFor, SsoRequiredError } from '../workspaces/workspaceSingleSignOn';
import { WORKSPACE_SSO_MSG } from '../../domain/singleSignOn';
import { ACCOUNT_SECURITY_CODES, ACCOUNT_SECURITY_MSG, EMAIL_VERIFICATION_TTL_MS, PASSWORD_RESET_TTL_MS } from '../../domain/accountSecurity';
import { EmailTakenError, checkNewPassword, normalizeEmail } from './accounts';
import { hashPassword, verifyPassword } from './passwords';
import { endAllSessions } from './sessions';
import { hasLiveAccountToken, issueAccountToken, newAccountToken, useAccountToken } from './accountTokens';
import {
  emailChangeMessage,
  emailChangeNoticeMessage,
  passwordResetMessage,
  sendAccountMail,
  verificationMessage,
  type AccountMailConfig,
  type AccountMailLogger,
} from './accountMail';

export interface AccountSecurityDeps {
  knex: Knex;
  config: AccountMailConfig;
  logger: AccountMailLogger;
}

const NO_USER = '00000000-0000-0000-0000-000000000000';

function linkInvalid(): DomainError {
  return new DomainError(400, ACCOUNT_SECURITY_CODES.linkInvalid, ACCOUNT_SECURITY_MSG.linkInvalid);
}

/** E-mails sent after the answer (a reset's): awaited by `settleAccountMail` (tests, shutdown). */
const pending = new Set<Promise<unknown>>();
function inBackground(send: Promise<unknown>): void {
  const settled = send.catch(() => undefined).finally(() => pending.delete(settled));
  pending.add(settled);
}
export async function settleAccountMail(): Promise<void> {
  await Promise.all([...pending]);
}

/**
 * Issues a reset link for the address's account and e-mails it after returning; for an address without an account
 * it makes a token and runs the same statements, which touch no row. Either way it resolves to nothing.
 */
export async function requestPasswordReset(deps: AccountSecurityDeps, rawEmail: string): Promise<void> {
  const email = normalizeEmail(rawEmail);
  const issued = newAccountToken();
  const user = (await deps.knex('users').where({ email }).whereNull('deletion_requested_at').first('id', 'email')) as { id: string; email: string } | undefined;
  // a domain that must use single sign-on: the same answer for every address of it (nothing about any account); only
  // an owner of the workspace that requires it, who is exempt, gets the link
  const domainRule = await ssoRequirementFor(deps.knex, email, null);
  if (domainRule) {
    if (user && !(await ssoRequirementFor(deps.knex, email, user.id))) {
      const token = await issueAccountToken(deps.knex, { userId: user.id, purpose: 'reset', ttlMs: PASSWORD_RESET_TTL_MS, issued });
      inBackground(sendAccountMail(deps.config, user.email, passwordResetMessage(deps.config, token), deps.logger, 'password reset'));
    }
    throw new SsoRequiredError(domainRule, WORKSPACE_SSO_MSG.ssoRequiredReset(domainRule.workspaceName, domainRule.providerName));
  }
  if (!user) {
    await deps.knex('account_tokens').where({ user_id: NO_USER, purpose: 'reset' }).whereNull('used_at').update({ used_at: deps.knex.fn.now() });
    await deps.knex('account_tokens').where({ token_hash: issued.hash }).first('id');
    return;
  }
  const token = await issueAccountToken(deps.knex, { userId: user.id, purpose: 'reset', ttlMs: PASSWORD_RESET_TTL_MS, issued });
  inBackground(sendAccountMail(deps.config, user.email, passwordResetMessage(deps.config, token), deps.logger, 'password reset'));
}

/**
 * Sets the new password of the link's account, ends every one of its sessions (their event streams close) and uses
 * the link up. Access tokens stay. Opening the link proves the address too: an unverified account becomes verified.
 */
export async function confirmPasswordReset(knex: Knex, input: { token: string; password: string }): Promise<{ endedSessions: number }> {
  checkNewPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  return knex.transaction(async (trx) => {
    const used = await useAccountToken(trx, 'reset', input.token);
    if (!used) throw linkInvalid();
    const owner = (await trx('users').where({ id: used.userId }).first('id', 'email')) as { id: string; email: string };
    await refuseWhereSsoRequired(trx, owner);
    await trx('users').where({ id: used.userId }).update({ password_hash: passwordHash, updated_at: trx.fn.now() });
    await trx('users').where({ id: used.userId }).whereNull('email_verified_at').update({ email_verified_at: trx.fn.now() });
    const endedSessions = await endAllSessions(trx, used.userId);
    return { endedSessions };
  });
}

/** Sends a fresh verification link to the account's address (earlier links stop working). 409 when already verified. */
export async function sendVerification(deps: AccountSecurityDeps, userId: string): Promise<boolean> {
  const user = (await deps.knex('users').where({ id: userId }).first('email', 'email_verified_at')) as { email: string; email_verified_at: Date | null } | undefined;
  if (!user) throw new DomainError(404, 'ACCOUNT_NOT_FOUND', 'Account not found');
  if (user.email_verified_at) throw new DomainError(409, ACCOUNT_SECURITY_CODES.alreadyVerified, ACCOUNT_SECURITY_MSG.alreadyVerified);
  const token = await issueAccountToken(deps.knex, { userId, purpose: 'verify', ttlMs: EMAIL_VERIFICATION_TTL_MS });
  return sendAccountMail(deps.config, user.email, verificationMessage(deps.config, token), deps.logger, 'verification');
}

/** At the sign-up, and at the sign-in of an unverified account without a live link: sends one. */
export async function sendVerificationAtSignIn(deps: AccountSecurityDeps, userId: string): Promise<void> {
  if (await hasLiveAccountToken(deps.knex, userId, 'verify')) return;
  try {
    await sendVerification(deps, userId);
  } catch (err) {
    // never fails the sign-in: the banner's Resend is there
    deps.logger.warn({ err }, 'could not send the verification e-mail');
  }
}

/**
 * Opens a verification link: a `verify` link marks the account's address verified; an `email_change` link makes
 * its new address the account's (verified). Answers which it was.
 */
export async function verifyEmail(knex: Knex, token: string): Promise<{ changedEmail: boolean }> {
  try {
    return await knex.transaction(async (trx) => {
      const verified = await useAccountToken(trx, 'verify', token);
      if (verified) {
        await trx('users').where({ id: verified.userId }).whereNull('email_verified_at').update({ email_verified_at: trx.fn.now() });
        return { changedEmail: false };
      }
      const changed = await useAccountToken(trx, 'email_change', token);
      if (!changed?.newEmail) throw linkInvalid();
      await trx('users').where({ id: changed.userId }).update({ email: changed.newEmail, email_verified_at: trx.fn.now(), updated_at: trx.fn.now() });
      await trx('profiles').where({ id: changed.userId }).update({ email: changed.newEmail });
      return { changedEmail: true };
    });
  } catch (err) {
    if ((err instanceof UniqueViolationError && err.constraint === 'users_email_unique') || (err as { constraint?: string }).constraint === 'users_email_unique') {
      throw new EmailTakenError();
    }
    throw err;
  }
}

/**
 * Asks for the account's address to become `newEmail`: checks the password, sends a link to the new address and a
 * notice to the old one (when it is verified: an unverified address gets no e-mail but its verification). The
 * address changes only when the link is opened.
 */
export async function requestEmailChange(deps: AccountSecurityDeps, userId: string, input: { email: string; password: string }): Promise<{ sent: boolean; email: string }> {
  const newEmail = normalizeEmail(input.email);
  const user = (await deps.knex('users').where({ id: userId }).first('email', 'password_hash', 'email_verified_at')) as
    | { email: string; password_hash: string; email_verified_at: Date | null }
    | undefined;
  if (!user) throw new DomainError(404, 'ACCOUNT_NOT_FOUND', 'Account not found');
  if (!(await verifyPassword(input.password, user.password_hash))) throw new DomainError(400, 'CURRENT_PASSWORD_INCORRECT', 'Current password is incorrect');
  if (newEmail === user.email) throw new DomainError(400, 'SAME_EMAIL', ACCOUNT_SECURITY_MSG.sameEmail);
  if (await deps.knex('users').where({ email: newEmail }).first('id')) throw new EmailTakenError();
  const token = await issueAccountToken(deps.knex, { userId, purpose: 'email_change', ttlMs: EMAIL_VERIFICATION_TTL_MS, newEmail });
  const sent = await sendAccountMail(deps.config, newEmail, emailChangeMessage(deps.config, token), deps.logger, 'e-mail change');
  if (user.email_verified_at) await sendAccountMail(deps.config, user.email, emailChangeNoticeMessage(newEmail), deps.logger, 'e-mail change notice');
  return { sent, email: newEmail };
}

/** Marks accounts verified by an operator's word (npm run admin -- verify / verify-existing); answers how many changed. */
export async function markVerified(knex: Knex, which: { email: string } | 'all'): Promise<number> {
  const query = knex('users').whereNull('email_verified_at');
  if (which !== 'all') query.where({ email: normalizeEmail(which.email) });
  return query.update({ email_verified_at: knex.fn.now() });
}
