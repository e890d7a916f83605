/**
 * The invitation e-mail, sent with nodemailer over SMTP_URL (smtp://user:pass@host:port, smtps:// for TLS) from
 * SMTP_FROM. Without SMTP_URL nothing is sent and the inviter copies the link from the Members page. A failed send
 * never fails the invitation: it is logged and the API answers `emailed: false`, so the link is copied instead.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../config/logger';
import { ROLE_LABELS, type InvitableRole } from '../../domain/workspaceRoles';

export interface InvitationMailConfig {
  smtpUrl: string;
  smtpFrom: string;
}

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

const transports = new Map<string, Transporter>();

function transportFor(smtpUrl: string): Transporter {
  let transport = transports.get(smtpUrl);
  if (!transport) {
    // bounded waits: an SMTP server that does not answer must not hold the invitation request for minutes
    transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
    transports.set(smtpUrl, transport);
  }
  return transport;
}

/** Sends the invitation when SMTP_URL is set; true when the server accepted it, false when not sent (logged). */
export async function sendInvitationMail(config: InvitationMailConfig, mail: InvitationMail, logger: Pick<Logger, 'warn' | 'info'>): Promise<boolean> {
  if (!config.smtpUrl) return false;
  const { subject, text } = invitationMessage(mail);
  try {
    const info = await transportFor(config.smtpUrl).sendMail({ from: config.smtpFrom, to: mail.to, subject, text });
    logger.info({ messageId: info.messageId, workspace: mail.workspaceName }, 'invitation e-mail sent');
    return true;
  } catch (err) {
    logger.warn({ err, workspace: mail.workspaceName }, 'could not send the invitation e-mail; the link can be copied from the Members page');
    return false;
  }
}
