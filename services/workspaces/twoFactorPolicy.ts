/**
 * A workspace's requirement of two-factor sign-in (DESIGN.md "Accounts"): its owners may require it of every member.
 * A member without it is refused before acting in the workspace (403 TWO_FACTOR_REQUIRED, which the front end turns
 * into a set-up prompt) until they set it up; they may still see their list of workspaces and leave. A personal
 * workspace is its person's alone and never requires it.
 */
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import { TWO_FACTOR_CODES, TWO_FACTOR_MSG } from '../../domain/twoFactor';
import { hasSecondFactor } from '../accounts/pendingSignIns';
import { publishEvent } from '../platform/events';
import { authorize } from './access';
import { lockWorkspace, shownWorkspaceName, workspaceSummary, type WorkspaceSummary } from './workspaces';

type Db = Knex | Knex.Transaction;

export class TwoFactorRequiredError extends DomainError {
  constructor(workspaceName: string) {
    super(403, TWO_FACTOR_CODES.required, TWO_FACTOR_MSG.required(workspaceName));
  }
}

/**
 * Throws TwoFactorRequiredError when the workspace requires two-factor sign-in and the user has none. One query, and
 * none for the user's own personal workspace (whose id is theirs).
 */
export async function checkTwoFactorPolicy(db: Db, workspaceId: string, userId: string): Promise<void> {
  if (workspaceId === userId) return;
  const row = (await db('workspaces as w')
    .where('w.id', workspaceId)
    .andWhere('w.two_factor_required', true)
    .first(
      'w.name',
      'w.personal_user_id',
      db.raw('(exists (select 1 from totp_factors t where t.user_id = ? and t.confirmed_at is not null) or exists (select 1 from passkeys p where p.user_id = ?)) as has_factor', [userId, userId]),
    )) as { name: string; personal_user_id: string | null; has_factor: boolean } | undefined;
  if (row && !row.has_factor) throw new TwoFactorRequiredError(shownWorkspaceName(row, userId));
}

/** Turns the requirement on or off (owners). Turning it on needs the owner's own two-factor sign-in first. */
export async function setTwoFactorRequired(knex: Knex, input: { workspaceId: string; userId: string; required: boolean }): Promise<WorkspaceSummary> {
  return knex.transaction(async (trx) => {
    const row = await lockWorkspace(trx, input.workspaceId);
    await authorize(trx, { userId: input.userId, workspaceId: input.workspaceId, action: 'own' });
    if (row.personal_user_id !== null) throw new DomainError(400, TWO_FACTOR_CODES.personalWorkspace, TWO_FACTOR_MSG.personalWorkspace);
    if (input.required && !(await hasSecondFactor(trx, input.userId))) throw new DomainError(409, TWO_FACTOR_CODES.ownerNeedsTwoFactor, TWO_FACTOR_MSG.ownerNeedsTwoFactor);
    await trx('workspaces').where({ id: row.id }).update({ two_factor_required: input.required, updated_at: trx.fn.now() });
    await publishEvent(trx, row.id, { kind: 'workspace', change: 'settings', workspaceId: row.id });
    return workspaceSummary(trx, row.id, input.userId);
  });
}
