/**
 * The e-mails of account security: a password reset link, a verification link (after sign-up, from the banner, at
 * the sign-in of an unverified account), the link that confirms a new address, and the notice to the old one.
 * These are the only e-mails an unverified account receives (services/accounts/mailRecipients.ts keeps the others away).
 */
import type { Logger } from '../../config/logger';
import { sendMail, type MailConfig } from '../platform/mailer';

export interface AccountMailConfig extends MailConfig {
  publicUrl: string;
}

export type AccountMailLogger = Pick<Logger, 'warn' | 'info'>;

function link(config: AccountMailConfig, query: Record<string, string>): string {
  const url = new URL('/', config.publicUrl);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.toString();
}

export function passwordResetMessage(config: AccountMailConfig, token: string): { subject: string; text: string } {
  return {
    subject: 'Reset your Render Studio password',
    text: [
      'Someone asked to reset the password of your Render Studio account. To choose a new password, open this link within one hour:',
      '',
      link(config, { auth: 'reset', token }),
      '',
      'Setting a new password signs out every session of your account. Your personal access tokens stay valid: revoke them in Account → Access tokens if you think someone else has them.',
      '',
      'If you did not ask for this, ignore this e-mail: your password stays as it is.',
    ].join('\n'),
  };
}

export function verificationMessage(config: AccountMailConfig, token: string): { subject: string; text: string } {
  return {
    subject: 'Verify your e-mail address for Render Studio',
    text: ['Please confirm that this is your e-mail address by opening this link within 24 hours:', '', link(config, { verify: token }), '', 'If you did not sign up for Render Studio, ignore this e-mail.'].join('\n'),
  };
}

export function emailChangeMessage(config: AccountMailConfig, token: string): { subject: string; text: string } {
  return {
    subject: 'Confirm your new e-mail address for Render Studio',
    text: [
      'Someone asked to use this address for their Render Studio account. To confirm it, open this link within 24 hours:',
      '',
      link(config, { verify: token, change: '1' }),
      '',
      'Until then the account keeps its old address. If you did not ask for this, ignore this e-mail.',
    ].join('\n'),
  };
}

export function emailChangeNoticeMessage(newEmail: string): { subject: string; text: string } {
  return {
    subject: 'Your Render Studio e-mail address is being changed',
    text: [
      `Someone signed in to your Render Studio account asked to change its e-mail address to ${newEmail}.`,
      'The change takes effect once the link sent to the new address is opened.',
      '',
      'If this was not you, change your password now (Account → Security) and sign out your other sessions.',
    ].join('\n'),
  };
}

export async function sendAccountMail(config: AccountMailConfig, to: string, message: { subject: string; text: string }, logger: AccountMailLogger, what: string): Promise<boolean> {
  return sendMail(config, { to, ...message }, logger, what);
}
