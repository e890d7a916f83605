/**
 * Notification e-mail (issue 42): with SMTP set up, each notification of a member whose choice is `each` is e-mailed
 * once, after the transaction that recorded it. A sender claims the unsent rows first (one update, so two senders
 * never send the same one), then sends to those still members of the workspace: nothing is e-mailed to someone who
 * left. Every message carries a signed link that turns the e-mails off without signing in. The `digest` choice is
 * stored; its daily message is not sent yet.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { sendMail, type MailConfig } from '../platform/mailer';

export interface NotificationMailDeps {
  knex: Knex;
  config: MailConfig & { publicUrl: string; signingSecret: string };
  logger: Pick<Logger, 'warn' | 'info'>;
}

/** Rows this old or newer are sent; older ones (SMTP set up later, a sender that died) are left, not sent late. */
const SEND_WINDOW = '1 hour';

function unsubscribeSignature(secret: string, userId: string): string {
  return createHmac('sha256', secret).update(`notification-unsubscribe:${userId}`).digest('base64url');
}

/** The link in every notification e-mail that turns them off. */
export function unsubscribeLink(config: { publicUrl: string; signingSecret: string }, userId: string): string {
  return `${config.publicUrl.replace(/\/+$/, '')}/api/notifications/unsubscribe?user=${encodeURIComponent(userId)}&sig=${unsubscribeSignature(config.signingSecret, userId)}`;
}

/** Whether `sig` is the signature of `userId`'s unsubscribe link. */
export function validUnsubscribe(secret: string, userId: string, sig: string): boolean {
  const expected = Buffer.from(unsubscribeSignature(secret, userId));
  const given = Buffer.from(sig);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

interface Claimed {
  id: string;
  workspace_id: string;
  user_id: string;
  text: string;
  email: string;
  workspace_name: string;
  member: boolean;
}

/** Sends the unsent notification e-mails (a no-op without SMTP_URL); answers how many were sent. */
export async function sendNotificationMail(deps: NotificationMailDeps): Promise<number> {
  if (!deps.config.smtpUrl) return 0;
  const { rows } = (await deps.knex.raw(
    `with claimed as (
       update notifications n set emailed_at = now()
         from users u
        where u.id = n.user_id and u.notification_email = 'each' and n.emailed_at is null and n.created_at > now() - interval '${SEND_WINDOW}'
       returning n.id, n.workspace_id, n.user_id, n.text, u.email
     )
     select c.*, w.name as workspace_name,
            exists (select 1 from workspace_members m where m.workspace_id = c.workspace_id and m.user_id = c.user_id) as member
       from claimed c join workspaces w on w.id = c.workspace_id`,
  )) as { rows: Claimed[] };
  let sent = 0;
  for (const n of rows) {
    if (!n.member) continue;
    const text = [
      `${n.text}.`,
      '',
      `Open Render Studio to see it: ${deps.config.publicUrl.replace(/\/+$/, '')}/?workspace=${n.workspace_id}`,
      '',
      `You get this e-mail for each notification in ${n.workspace_name}. To stop these e-mails, open:`,
      unsubscribeLink(deps.config, n.user_id),
      'or choose in Account settings.',
    ].join('\n');
    if (await sendMail(deps.config, { to: n.email, subject: `${n.text} (${n.workspace_name})`, text }, deps.logger, 'notification')) sent += 1;
  }
  return sent;
}
