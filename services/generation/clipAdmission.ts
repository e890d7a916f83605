/**
 * Whether a user may start a clip now (spec 000 sections 5, 8; DESIGN.md "Credits"). The API asks it to
 * answer a refused start at once; the clip workflow's admission activity asks it again under the profile
 * lock, where its answer is the one that counts.
 */
import { CLIP_ERROR_CODES, CLIP_JOB_ACTIVE_STATUSES, CLIP_MESSAGES } from '../../domain/clipGeneration';
import { REJECTION_STREAK_WARNING_AT } from '../../domain/constants';
import { ERROR_CODES, MSG } from '../../domain/messages';
import { canCreateContent, type Db } from '../billing/credits';
import { UUID_RE } from '../billing/creditLedger/ledger';

export type ClipAdmissionCheck =
  | { ok: true; warning: string | null; code: string | null }
  | { ok: false; status: number; code: string; error: string };

/**
 * The clip `actorId` has pending or processing in the workspace, if any: the specs' "a user restricted to one clip"
 * is a person, so in a team each member has one at a time (the workspace's credits bound how many run together). A
 * row from before workspaces records nobody; in a personal workspace its owner (whose id the workspace's is) made it.
 */
export async function activeClipJobId(db: Db, workspaceId: string, actorId: string, exceptJobIds: readonly string[] = []): Promise<string | null> {
  const query = db('video_generation_jobs')
    .where({ workspace_id: workspaceId })
    .where((mine) => {
      mine.where({ created_by: actorId });
      if (actorId === workspaceId) mine.orWhereNull('created_by');
    })
    .whereIn('status', CLIP_JOB_ACTIVE_STATUSES)
    .first('id');
  if (exceptJobIds.length > 0) query.whereNotIn('id', exceptJobIds);
  const row = (await query) as { id: string } | undefined;
  return row?.id ?? null;
}

/** The workspace's cap on its clips in flight when it has one and every place is taken, else null. */
export async function workspaceClipCapReached(db: Db, workspaceId: string, exceptJobIds: readonly string[] = []): Promise<number | null> {
  const row = (await db('workspaces').where({ id: workspaceId }).first('max_clips_in_flight')) as { max_clips_in_flight: number | null } | undefined;
  const cap = row?.max_clips_in_flight ?? null;
  if (cap === null) return null;
  const query = db('video_generation_jobs').where({ workspace_id: workspaceId }).whereIn('status', CLIP_JOB_ACTIVE_STATUSES).count<{ n: string }[]>({ n: '*' });
  if (exceptJobIds.length > 0) query.whereNotIn('id', exceptJobIds);
  const [{ n }] = await query;
  return Number(n) >= cap ? cap : null;
}

/**
 * The refusals in the order the user can act on them: the cooldown, a clip of the actor's already running (one at a time),
 * then the workspace's cap on its clips in flight when it set one, then the credit rules of canCreate (available < 4, told apart by whether pending items hold the missing
 * credits, then the pending-approval limit). A pass carries the warning when the last 4 decisions were rejections.
 */
/**
 * The clip job whose item a request for changes replaces with the clip `jobId` (services/review/changeRequests.ts):
 * it has made its item, though its row reads processing until its workflow records the end a moment later, so it is
 * not the member's clip in progress for the next version.
 */
export async function clipJobReplacedBy(db: Db, jobId: string): Promise<string | null> {
  const row = (await db('change_requests as c').join('pending_approvals as p', 'p.id', 'c.approval_id').where('c.next_job_id', jobId).first('p.source_job_id')) as
    | { source_job_id: string | null }
    | undefined;
  // a job id of a change request is a uuid; an item from elsewhere may name its job otherwise (a text column)
  const id = row?.source_job_id ?? null;
  return id && UUID_RE.test(id) ? id : null;
}

/** Whether the clip `jobId` (the one about to start) may start now; it and the job it replaces are not counted as running. */
export async function checkClipAdmission(db: Db, workspaceId: string, actorId: string, jobId: string, now: Date = new Date()): Promise<ClipAdmissionCheck> {
  const replaced = UUID_RE.test(jobId) ? await clipJobReplacedBy(db, jobId) : null;
  const exceptJobIds = replaced ? [jobId, replaced] : [jobId];
  const credit = await canCreateContent(db, workspaceId, 'clip', now);
  if (credit.reason === 'cooldown') {
    return { ok: false, status: 429, code: ERROR_CODES.rejectionStreakCooldown, error: MSG.rejectionStreakCooldown };
  }
  if (await activeClipJobId(db, workspaceId, actorId, exceptJobIds)) {
    return { ok: false, status: 409, code: ERROR_CODES.singleClipRestriction, error: MSG.waitForCurrentGeneration };
  }
  const cap = await workspaceClipCapReached(db, workspaceId, exceptJobIds);
  if (cap !== null) {
    return { ok: false, status: 409, code: CLIP_ERROR_CODES.workspaceClipCap, error: CLIP_MESSAGES.workspaceClipCap(cap) };
  }
  switch (credit.reason) {
    case 'insufficient_credits':
      return { ok: false, status: 400, code: ERROR_CODES.insufficientCredits, error: CLIP_MESSAGES.insufficientCredits(Math.max(0, credit.available), credit.cost) };
    case 'pending_cost':
      return { ok: false, status: 400, code: CLIP_ERROR_CODES.pendingCost, error: CLIP_MESSAGES.pendingCost };
    case 'pending_limit':
      return { ok: false, status: 409, code: ERROR_CODES.pendingLimitReached, error: MSG.pendingLimitReached(credit.limit) };
    default:
      break;
  }
  const profile = (await db('profiles').where({ id: workspaceId }).first('rejection_streak')) as { rejection_streak: number } | undefined;
  if (profile && Number(profile.rejection_streak) === REJECTION_STREAK_WARNING_AT) {
    return { ok: true, warning: MSG.rejectionStreakWarning, code: ERROR_CODES.rejectionStreakWarning };
  }
  return { ok: true, warning: null, code: null };
}
