/**
 * Telling a workspace's owners and admins that one of its webhook endpoints was disabled (a 410 answer, or every
 * attempt failing for 3 days). The in-app notice is the realtime event `webhook` / `disabled` published in the
 * transaction that disabled it (services/integrations/webhookDeliveries.ts), and the endpoint shows why it is off;
 * this adds an e-mail to each owner and admin when SMTP_URL is set, like the invitation e-mail
 * (services/workspaces/invitationMail.ts). A failed send is logged and changes nothing.
 */
import type { Knex } from 'knex';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../config/logger';

export interface WebhookNoticeConfig {
  smtpUrl: string;
  smtpFrom: string;
  publicUrl: string;
}

export interface DisabledEndpointNotice {
  workspaceName: string;
  url: string;
  reason: string;
  /** where the endpoint's page is */
  link: string;
}

export function webhookDisabledMessage(notice: DisabledEndpointNotice): { subject: string; text: string } {
  return {
    subject: `A webhook endpoint of ${notice.workspaceName} was turned off`,
    text: [
      `Render Studio turned off the webhook endpoint ${notice.url} of the workspace "${notice.workspaceName}".`,
      '',
      notice.reason,
      '',
      'Events are not sent to it until an owner or admin turns it on again on the Webhooks page:',
      notice.link,
      '',
      'You receive this e-mail because you are an owner or admin of the workspace.',
    ].join('\n'),
  };
}

const transports = new Map<string, Transporter>();

function transportFor(smtpUrl: string): Transporter {
  let transport = transports.get(smtpUrl);
  if (!transport) {
    transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
    transports.set(smtpUrl, transport);
  }
  return transport;
}

/** The owners' and admins' addresses and the workspace's name. */
async function recipients(knex: Knex, workspaceId: string): Promise<{ name: string; emails: string[] } | null> {
  const workspace = await knex('workspaces').where({ id: workspaceId }).first<{ name: string } | undefined>('name');
  if (!workspace) return null;
  const rows = (await knex('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.workspace_id', workspaceId)
    .whereIn('m.role', ['owner', 'admin'])
    // an unverified account receives no e-mail but its verification (DESIGN.md "Accounts")
    .whereNotNull('u.email_verified_at')
    .orderBy('u.email')
    .select('u.email')) as Array<{ email: string }>;
  return { name: workspace.name, emails: rows.map((r) => r.email) };
}

/** E-mails the notice to each owner and admin when SMTP_URL is set; answers how many were accepted. */
export async function mailWebhookDisabledNotice(
  knex: Knex,
  config: WebhookNoticeConfig,
  input: { workspaceId: string; endpointId: string; url: string; reason: string },
  logger: Pick<Logger, 'warn' | 'info'>,
): Promise<number> {
  if (!config.smtpUrl) return 0;
  const to = await recipients(knex, input.workspaceId);
  if (!to || to.emails.length === 0) return 0;
  // the dashboard's address of that workspace's Webhooks page with the endpoint's log open (frontend/src/atoms/viewUrl.ts)
  const address = new URLSearchParams({ view: 'webhooks', workspace: input.workspaceId, endpoint: input.endpointId });
  const link = new URL(`/?${address.toString()}`, config.publicUrl).toString();
  const { subject, text } = webhookDisabledMessage({ workspaceName: to.name, url: input.url, reason: input.reason, link });
  let sent = 0;
  for (const email of to.emails) {
    try {
      await transportFor(config.smtpUrl).sendMail({ from: config.smtpFrom, to: email, subject, text });
      sent += 1;
    } catch (err) {
      logger.warn({ err, endpointId: input.endpointId }, 'could not e-mail the webhook endpoint notice');
    }
  }
  logger.info({ endpointId: input.endpointId, sent }, 'webhook endpoint disabled notice e-mailed');
  return sent;
}
