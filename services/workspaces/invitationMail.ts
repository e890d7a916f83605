/**
 * The invitation e-mail, sent with nodemailer over SMTP_URL (smtp://user:pass@host:port, smtps:// for TLS) from
 * SMTP_FROM. Without SMTP_URL nothing is sent and the inviter copies the link from the Members page. A failed send
 * never fails the invitation: it is logged and the API answers `emailed: false`, so the link is copied instead.
 */
import type { Logger } from '../../config/logger';
import { ROLE_LABELS, type InvitableRole } from '../../domain/workspaceRoles';
import { sendMail, type MailConfig } from '../platform/mailer';

export type InvitationMailConfig = MailConfig;

export interface InvitationMail {
  to: string;
  workspaceName: string;
  inviterName: string;
  role: InvitableRole;
  link: string;
  expiresAt: string;
}

/** Subject and text of the message (plain text: every client shows it, and the link stays copyable). */
export function invitationMessage(mail: InvitationMail): { subject: string; text: string } {
  const who = mail.inviterName || 'A colleague';
  const role = ROLE_LABELS[mail.role];
  const subject = `${who} invited you to ${mail.workspaceName} on Render Studio`;
  const until = new Date(mail.expiresAt).toUTCString();
  const text = [
    `${who} invited you to join the workspace "${mail.workspaceName}" on Render Studio as ${role === 'Admin' ? 'an' : 'a'} ${role}.`,
    '',
    'Open this link to accept (sign up with this e-mail address if you have no account yet):',
    mail.link,
    '',
    `The link works once and until ${until}. If you did not expect this invitation, you can ignore this e-mail.`,
  ].join('\n');
  return { subject, text };
}

/** Sends the invitation when SMTP_URL is set; true when the server accepted it, false when not sent (logged). */
export async function sendInvitationMail(config: InvitationMailConfig, mail: InvitationMail, logger: Pick<Logger, 'warn' | 'info'>): Promise<boolean> {
  const sent = await sendMail(config, { to: mail.to, ...invitationMessage(mail) }, logger, 'invitation');
  if (!sent && config.smtpUrl) logger.warn({ workspace: mail.workspaceName }, 'the invitation link can be copied from the Members page');
  return sent;
}
