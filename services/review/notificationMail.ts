/**
 * Notification e-mail (issue 42): with SMTP set up, each notification of a member whose choice is `each` is e-mailed
 * once, after the transaction that recorded it. A sender claims the unsent rows first (one update, so two senders
 * never send the same one), then sends to those still members of the workspace: nothing is e-mailed to someone who
 * left. Every message carries a signed link that turns the e-mails off without signing in. People who chose `digest`
 * get one message a day at most: the hourly schedule `notification-digest` sends everything unsent to a person once
 * their oldest unsent notification is a day old.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { TASK_QUEUES } from '../../domain/taskQueues';
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
        where u.id = n.user_id and u.email_verified_at is not null and u.notification_email = 'each' and n.emailed_at is null and n.created_at > now() - interval '${SEND_WINDOW}'
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

interface DigestRow {
  user_id: string;
  email: string;
  workspace_id: string;
  workspace_name: string;
  text: string;
  created_at: Date;
  member: boolean;
}

/**
 * The daily digests: for each person who chose `digest` and whose oldest unsent notification is a day old, claims
 * all their unsent ones and sends one message listing them by workspace (the ones of workspaces they left are not
 * listed). Answers how many messages were sent (a no-op without SMTP_URL).
 */
export async function sendNotificationDigests(deps: NotificationMailDeps): Promise<number> {
  if (!deps.config.smtpUrl) return 0;
  const { rows } = (await deps.knex.raw(
    `with due as (
       select n.user_id from notifications n join users u on u.id = n.user_id
        where u.notification_email = 'digest' and u.email_verified_at is not null and n.emailed_at is null
        group by n.user_id having min(n.created_at) <= now() - interval '1 day'
     ), claimed as (
       update notifications n set emailed_at = now() from due
        where n.user_id = due.user_id and n.emailed_at is null
       returning n.user_id, n.workspace_id, n.text, n.created_at
     )
     select c.*, u.email, w.name as workspace_name,
            exists (select 1 from workspace_members m where m.workspace_id = c.workspace_id and m.user_id = c.user_id) as member
       from claimed c join users u on u.id = c.user_id join workspaces w on w.id = c.workspace_id
      order by c.user_id, w.name, c.created_at`,
  )) as { rows: DigestRow[] };
  const byPerson = new Map<string, DigestRow[]>();
  for (const row of rows) if (row.member) byPerson.set(row.user_id, [...(byPerson.get(row.user_id) ?? []), row]);
  const site = deps.config.publicUrl.replace(/\/+$/, '');
  let sent = 0;
  for (const [userId, list] of byPerson) {
    const lines: string[] = [];
    let workspace = '';
    for (const row of list) {
      if (row.workspace_name !== workspace) {
        workspace = row.workspace_name;
        lines.push('', `${workspace} (${site}/?workspace=${row.workspace_id}):`);
      }
      lines.push(`- ${row.text} (${new Date(row.created_at).toUTCString()})`);
    }
    const text = [
      `What happened in Render Studio since your last digest:`,
      ...lines,
      '',
      'You get this digest once a day at most. To stop these e-mails, open:',
      unsubscribeLink(deps.config, userId),
      'or choose in Account settings.',
    ].join('\n');
    const subject = `Render Studio: ${list.length} ${list.length === 1 ? 'notification' : 'notifications'}`;
    if (await sendMail(deps.config, { to: list[0].email, subject, text }, deps.logger, 'notification digest')) sent += 1;
  }
  return sent;
}

export const NOTIFICATION_DIGEST_SCHEDULE_ID = 'notification-digest';

/** The hourly schedule of the digests (runs never overlap); created once, kept across worker restarts. */
export async function ensureNotificationDigestSchedule(client: Client, taskQueue: string = TASK_QUEUES.webhooks): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: NOTIFICATION_DIGEST_SCHEDULE_ID,
      spec: { intervals: [{ every: '1 hour' }] },
      action: { type: 'startWorkflow', workflowType: 'notificationDigestWorkflow', taskQueue, workflowId: `${NOTIFICATION_DIGEST_SCHEDULE_ID}-run`, args: [] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
