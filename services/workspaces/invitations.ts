/**
 * Invitations to a workspace (DESIGN.md "Teams (workspaces)"): by e-mail and role, with a link that carries a token
 * of 32 random bytes (base64url); only its sha256 is stored. An invitation is single use, bound to its e-mail
 * (accepting needs a session with that address) and open for 7 days. Inviting an address that already has an open
 * invitation replaces it (the old link stops working); inviting a member is refused (409).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import type { InvitableRole, WorkspaceRole } from '../../domain/workspaceRoles';
import { webhookLinks } from '../integrations/webhookEvents';
import { recordWebhookEvent } from '../integrations/webhookOutbox';
import { publishEvent } from '../platform/events';
import { authorize } from './access';
import { TEAM_CODES, TEAM_MSG } from './messages';
import { lockWorkspace, workspaceNameForOthers } from './workspaces';

import type { InvitationLookup, InvitationStatus, InvitationView } from '../../domain/workspaces';
import { ACCOUNT_SECURITY_CODES, ACCOUNT_SECURITY_MSG } from '../../domain/accountSecurity';
import { isEmailVerified } from '../accounts/mailRecipients';

type Db = Knex | Knex.Transaction;

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const TOKEN_BYTES = 32;

export type { InvitationLookup, InvitationStatus, InvitationView } from '../../domain/workspaces';

interface InvitationRow {
  id: string;
  workspace_id: string;
  email: string;
  role: InvitableRole;
  invited_by: string | null;
  expires_at: Date | string;
  accepted_at: Date | string | null;
  accepted_by?: string | null;
  revoked_at: Date | string | null;
  created_at: Date | string;
  inviter_name?: string | null;
  inviter_email?: string | null;
}

export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The link the invitee opens: the app's invitation view with the token. */
export function invitationLink(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/?view=invite&token=${encodeURIComponent(token)}`;
}

function statusOf(row: InvitationRow, now = Date.now()): InvitationStatus {
  if (row.accepted_at) return 'accepted';
  if (row.revoked_at) return 'revoked';
  if (new Date(row.expires_at).getTime() <= now) return 'expired';
  return 'pending';
}

function toView(row: InvitationRow): InvitationView {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    invitedBy: row.inviter_email ? { name: row.inviter_name ?? '', email: row.inviter_email } : null,
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    status: statusOf(row),
  };
}

function invitationQuery(db: Db) {
  return db('workspace_invitations as i')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .leftJoin('profiles as p', 'p.id', 'i.invited_by')
    .select('i.*', 'u.email as inviter_email', 'p.name as inviter_name');
}

/** The workspace's invitations, newest first (every state: the Members page shows the pending ones). */
export async function listInvitations(db: Db, workspaceId: string): Promise<InvitationView[]> {
  const rows = (await invitationQuery(db).where('i.workspace_id', workspaceId).orderBy('i.created_at', 'desc').orderBy('i.id')) as InvitationRow[];
  return rows.map(toView);
}

export interface CreatedInvitation {
  invitation: InvitationView;
  /** shown once (the copyable link) and mailed; never stored */
  token: string;
  workspaceName: string;
  inviterName: string;
}

/** Invites `email` as `role` (manageMembers, re-checked under the workspace's lock). */
export async function createInvitation(
  knex: Knex,
  input: { workspaceId: string; actorId: string; email: string; role: InvitableRole; now?: Date },
): Promise<CreatedInvitation> {
  const workspaceId = input.workspaceId.toLowerCase();
  const email = input.email.trim();
  return knex.transaction(async (trx) => {
    await lockWorkspace(trx, workspaceId);
    await authorize(trx, { userId: input.actorId, workspaceId, action: 'manageMembers' });
    const member = await trx('workspace_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.workspace_id', workspaceId)
      .andWhere('u.email', email)
      .first('m.user_id');
    if (member) throw new DomainError(409, TEAM_CODES.alreadyMember, TEAM_MSG.alreadyMember(email));
    // one open invitation per address: a new one replaces it (the old link stops working)
    await trx('workspace_invitations').where({ workspace_id: workspaceId, email }).whereNull('accepted_at').whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const now = input.now ?? new Date();
    const [inserted] = (await trx('workspace_invitations')
      .insert({
        workspace_id: workspaceId,
        email,
        role: input.role,
        token_hash: hashInvitationToken(token),
        invited_by: input.actorId,
        expires_at: new Date(now.getTime() + INVITATION_TTL_MS),
      })
      .returning('id')) as Array<{ id: string }>;
    await publishEvent(trx, workspaceId, { kind: 'workspace', change: 'invitations', workspaceId });
    const row = (await invitationQuery(trx).where('i.id', inserted.id).first()) as InvitationRow;
    return { invitation: toView(row), token, workspaceName: await workspaceNameForOthers(trx, workspaceId), inviterName: row.inviter_name || row.inviter_email || '' };
  });
}

/** Withdraws an open invitation (manageMembers). An invitation of another workspace, or one no longer open: 404/409. */
export async function revokeInvitation(knex: Knex, input: { workspaceId: string; actorId: string; invitationId: string }): Promise<void> {
  const workspaceId = input.workspaceId.toLowerCase();
  await knex.transaction(async (trx) => {
    await lockWorkspace(trx, workspaceId);
    await authorize(trx, { userId: input.actorId, workspaceId, action: 'manageMembers' });
    const row = (await trx('workspace_invitations').where({ id: input.invitationId, workspace_id: workspaceId }).forUpdate().first()) as InvitationRow | undefined;
    if (!row) throw new DomainError(404, TEAM_CODES.invitationNotFound, TEAM_MSG.invitationNotFound);
    if (row.accepted_at || row.revoked_at) throw new DomainError(409, 'INVITATION_NOT_OPEN', TEAM_MSG.invitationNotOpen);
    await trx('workspace_invitations').where({ id: row.id }).update({ revoked_at: trx.fn.now() });
    await publishEvent(trx, workspaceId, { kind: 'workspace', change: 'invitations', workspaceId });
  });
}

/** 410 with a text for each way a link stops working; null while it is open. */
function closedError(row: InvitationRow): DomainError | null {
  switch (statusOf(row)) {
    case 'accepted':
      return new DomainError(410, TEAM_CODES.invitationUsed, TEAM_MSG.invitationUsed);
    case 'revoked':
      return new DomainError(410, TEAM_CODES.invitationRevoked, TEAM_MSG.invitationRevoked);
    case 'expired':
      return new DomainError(410, TEAM_CODES.invitationExpired, TEAM_MSG.invitationExpired);
    default:
      return null;
  }
}

async function rowByToken(db: Db, token: string, lock = false): Promise<InvitationRow & { workspace_name: string }> {
  const query = invitationQuery(db)
    .join('workspaces as w', 'w.id', 'i.workspace_id')
    .select('w.name as workspace_name')
    .where('i.token_hash', hashInvitationToken(token))
    .first();
  if (lock) query.forUpdate('i');
  const row = (await query) as (InvitationRow & { workspace_name: string }) | undefined;
  if (!row) throw new DomainError(404, TEAM_CODES.invitationNotFound, TEAM_MSG.invitationNotFound);
  return row;
}

/**
 * What an open invitation is for (public: the token is the credential); 404 unknown, 410 used, revoked or expired.
 * `viewerId`, the signed-in user when there is one: the account that accepted a used invitation and is a member
 * learns that (`joinedWorkspaceId`) instead of 410, and one that is no member any more is told so.
 */
export async function lookupInvitation(db: Db, token: string, viewerId: string | null = null): Promise<InvitationLookup> {
  const row = await rowByToken(db, token);
  let joinedWorkspaceId: string | null = null;
  if (statusOf(row) === 'accepted' && viewerId !== null && row.accepted_by === viewerId) {
    const member = await db('workspace_members').where({ workspace_id: row.workspace_id, user_id: viewerId }).first('user_id');
    if (!member) throw new DomainError(410, TEAM_CODES.invitationUsed, TEAM_MSG.invitationUsedNoLongerMember);
    joinedWorkspaceId = row.workspace_id;
  } else {
    const closed = closedError(row);
    if (closed) throw closed;
  }
  return {
    workspaceName: await workspaceNameForOthers(db, row.workspace_id),
    email: row.email,
    role: row.role,
    inviterName: row.inviter_name || row.inviter_email || '',
    expiresAt: new Date(row.expires_at).toISOString(),
    joinedWorkspaceId,
  };
}

/**
 * Accepts the invitation for the signed-in user, whose e-mail must be the invited one (403 naming it otherwise).
 * Adds the membership with the invited role; a user who is already a member keeps their role (and the invitation is
 * used up). Single use: the row is locked, so two accepts of one link add one membership and the second sees 410.
 */
export async function acceptInvitation(knex: Knex, input: { token: string; user: { id: string; email: string } }): Promise<{ workspaceId: string; role: WorkspaceRole }> {
  return knex.transaction(async (trx) => {
    const found = await rowByToken(trx, input.token);
    // the workspace first, then the invitation: the lock order of every member change
    await lockWorkspace(trx, found.workspace_id);
    const row = await rowByToken(trx, input.token, true);
    // the same person opening their used link again: already in, nothing to do
    if (row.accepted_at && row.accepted_by === input.user.id) {
      const member = (await trx('workspace_members').where({ workspace_id: row.workspace_id, user_id: input.user.id }).first('role')) as { role: WorkspaceRole } | undefined;
      if (member) return { workspaceId: row.workspace_id, role: member.role };
    }
    const closed = closedError(row);
    if (closed) throw closed;
    if (row.email.toLowerCase() !== input.user.email.toLowerCase()) {
      throw new DomainError(403, TEAM_CODES.invitationWrongEmail, TEAM_MSG.invitationWrongEmail(row.email));
    }
    // an unverified address proves nothing: whoever holds the link could have signed up with it (DESIGN.md "Accounts")
    if (!(await isEmailVerified(trx, input.user.id))) {
      throw new DomainError(403, ACCOUNT_SECURITY_CODES.emailNotVerified, ACCOUNT_SECURITY_MSG.emailNotVerified);
    }
    const existing = (await trx('workspace_members').where({ workspace_id: row.workspace_id, user_id: input.user.id }).first('role')) as { role: WorkspaceRole } | undefined;
    if (!existing) {
      await trx('workspace_members').insert({ workspace_id: row.workspace_id, user_id: input.user.id, role: row.role });
      await recordWebhookEvent(trx, {
        workspaceId: row.workspace_id,
        type: 'member.joined',
        resourceId: input.user.id,
        data: { workspaceId: row.workspace_id, userId: input.user.id, role: row.role, invitationId: row.id, href: webhookLinks.members(row.workspace_id) },
      });
    }
    await trx('workspace_invitations').where({ id: row.id }).update({ accepted_at: trx.fn.now(), accepted_by: input.user.id });
    await publishEvent(trx, row.workspace_id, { kind: 'workspace', change: 'members', workspaceId: row.workspace_id });
    return { workspaceId: row.workspace_id, role: existing?.role ?? row.role };
  });
}
