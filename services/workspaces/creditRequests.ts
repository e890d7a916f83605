/**
 * A member who cannot buy credits asks the people who can: the workspace's owners and admins are told in their open
 * apps (the realtime `workspace` event, change `credit-request`) and, when SMTP_URL is set, by e-mail with the way to
 * Billing. The route limits how often one person asks (domain/actionLimits.ts).
 */
import type { Knex } from 'knex';
import type { AppConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import { DomainError } from '../../domain/errors';
import { WORKSPACE_MSG, type WorkspaceRole } from '../../domain/workspaceRoles';
import { publishEvent } from '../platform/events';
import { sendMail } from '../platform/mailer';
import { verifiedRecipients } from '../accounts/mailRecipients';
import { listMembers } from './members';

/** Who may buy: the roles whose `billing` action the workspace's owners and admins hold (domain/workspaceRoles.ts). */
const BUYER_ROLES: readonly WorkspaceRole[] = ['owner', 'admin'];

export interface CreditRequestAnswer {
  /** the owners and admins told, by name (their e-mail where they have no name) */
  askedOf: Array<{ name: string; role: WorkspaceRole }>;
  emailed: boolean;
}

/** The owners and admins of the workspace, as a member asking for credits sees them. */
export async function creditBuyers(knex: Knex, workspaceId: string): Promise<Array<{ userId: string; name: string; email: string; role: WorkspaceRole }>> {
  return (await listMembers(knex, workspaceId)).filter((m) => BUYER_ROLES.includes(m.role)).map((m) => ({ userId: m.userId, name: m.name || m.email, email: m.email, role: m.role }));
}

export async function requestCredits(
  deps: { knex: Knex; config: Pick<AppConfig, 'smtpUrl' | 'smtpFrom' | 'publicUrl'>; logger: Pick<Logger, 'warn' | 'info'> },
  input: { workspaceId: string; workspaceName: string; requester: { id: string; name: string; email: string } },
): Promise<CreditRequestAnswer> {
  const buyers = await creditBuyers(deps.knex, input.workspaceId);
  if (buyers.some((b) => b.userId === input.requester.id)) throw new DomainError(409, 'CAN_BUY_YOURSELF', WORKSPACE_MSG.canBuyYourself);
  const who = input.requester.name || input.requester.email;
  await publishEvent(deps.knex, input.workspaceId, { kind: 'workspace', change: 'credit-request', workspaceId: input.workspaceId, requestedBy: who });
  const billing = new URL('/?view=account&tab=billing', deps.config.publicUrl).toString();
  // an unverified account receives no e-mail but its verification (DESIGN.md "Accounts")
  const to = await verifiedRecipients(deps.knex, buyers.map((b) => b.email));
  const emailed =
    to.length > 0 &&
    (await sendMail(
    deps.config,
    {
      to,
      subject: `${who} asks for credits in ${input.workspaceName} on Render Studio`,
      text: [
        `${WORKSPACE_MSG.creditsAsked(who, input.workspaceName)} Generating needs credits, and as ${buyers.length === 1 ? 'its' : 'an'} owner or admin you can buy them.`,
        '',
        `Buy credits on the Billing page (switch to ${input.workspaceName} first):`,
        billing,
      ].join('\n'),
    },
    deps.logger,
    'credit request',
  ));
  return { askedOf: buyers.map((b) => ({ name: b.name, role: b.role })), emailed };
}
