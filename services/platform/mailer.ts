/**
 * E-mail over SMTP_URL (smtp://user:pass@host:port, smtps:// for TLS) from SMTP_FROM, with nodemailer. Without
 * SMTP_URL nothing is sent. A failed send never fails the action that sends it: it is logged and the caller learns
 * `false`, and says so.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../config/logger';

export interface MailConfig {
  smtpUrl: string;
  smtpFrom: string;
}

const transports = new Map<string, Transporter>();

function transportFor(smtpUrl: string): Transporter {
  let transport = transports.get(smtpUrl);
  if (!transport) {
    // bounded waits: an SMTP server that does not answer must not hold the request that sends for minutes
    transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
    transports.set(smtpUrl, transport);
  }
  return transport;
}

/** Sends a plain-text message when SMTP_URL is set; true when the server accepted it, false when not sent (logged as `what`). */
export async function sendMail(
  config: MailConfig,
  mail: { to: string | string[]; subject: string; text: string },
  logger: Pick<Logger, 'warn' | 'info'>,
  what: string,
): Promise<boolean> {
  if (!config.smtpUrl) return false;
  try {
    const info = await transportFor(config.smtpUrl).sendMail({ from: config.smtpFrom, to: mail.to, subject: mail.subject, text: mail.text });
    logger.info({ messageId: info.messageId }, `${what} e-mail sent`);
    return true;
  } catch (err) {
    logger.warn({ err }, `could not send the ${what} e-mail`);
    return false;
  }
}
