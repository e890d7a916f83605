import { withCounter } from '../domain/itemNames';
import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ApplicationFailure, type SearchAttributePair } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type { Knex } from 'knex';
import { REJECTION_COOLDOWN_MS, REJECTION_STREAK_COOLDOWN_AT, REJECTION_STREAK_WARNING_AT } from '../domain/constants';
import { DomainError } from '../domain/errors';
import { ERROR_CODES, MSG } from '../domain/messages';
import type { ContentKind } from '../domain/events';
import { approvalWorkflowId, type ApprovalMetadata, type NewPendingApproval } from '../domain/approvals';
import { PendingApproval } from '../db/models/PendingApproval';
import { consumeReservation, releaseReservation } from '../services/billing/credits';
import { publishEvent } from '../services/platform/events';
import { recordApprovalEvent } from '../services/integrations/webhookEvents';
import { removeStoredFiles, type StoredFileRef } from '../services/content/storedFiles';
import { fileUrl, isBucket } from '../storage';
import { APPROVAL_NOT_PENDING, type ApprovalStatus, type ApprovalWorkflowInput, type GuestDecider } from '../domain/workflowContracts/approval';
import { guestApproverKeys, guestDeciderLabel, linkApproved, recordGuestDecision, reviewLinkOwner } from '../services/review/guestDecisions';
import type { ActivityDeps } from './deps';
import { reportingRefusals } from './failures';
import { imageEditWorkflowId } from '../domain/imageEdit';
import { clipWorkflowId } from '../domain/workflowContracts/clipGeneration';
import { recordLineage, sourceFromFileUrl } from '../services/content/lineage';
import { moveThreadsToSavedItem } from '../services/review/commentItems';
import { carryThreadsOver, versionLinkOf } from '../services/review/versionChain';
import { versionFileName } from '../domain/changeRequests';
import { workspaceApprovalPolicy, workspaceApprovers } from '../services/workspaces/approvalPolicy';
import { notify, personName } from '../services/review/notifications';
import { sendNotificationMail } from '../services/review/notificationMail';
import { NOTIFICATION_TEXT } from '../domain/notifications';
import { APPROVAL_POLICY_CODES, APPROVAL_POLICY_MSG, approvalProgress, mayApproveUnder, readApprovalPolicy, type ApprovalProgress } from '../domain/approvalPolicy';

/** The approval workflow's type, for starting it by name (activities never import workflow code). */
type ApprovalWorkflow = (input: ApprovalWorkflowInput) => Promise<ApprovalStatus>;

export interface SubmitForApprovalInput extends NewPendingApproval {
  /** Where the item's approval workflow runs, and its search attributes (none when the namespace has not registered them). */
  approvalWorkflow: { taskQueue: string; searchAttributes: SearchAttributePair[] };
}

export interface CreatedPendingApproval {
  approvalId: string;
  workflowId: string;
  windowMs: number;
  approvalDeadline: string;
}

/** The library's kind of an approved item's content row. */
const CONTENT_KIND: Record<string, ContentKind> = { image: 'image', clip: 'clip', assembly: 'video' };

function notPending(status: string): ApplicationFailure {
  return ApplicationFailure.create({ message: `This item is no longer pending (${status})`, type: APPROVAL_NOT_PENDING, nonRetryable: true });
}

const PG_FOREIGN_KEY_VIOLATION = '23503';

function approvalNotFound(approvalId: string): ApplicationFailure {
  return ApplicationFailure.create({ message: `No pending approval ${approvalId}`, type: 'APPROVAL_NOT_FOUND', nonRetryable: true });
}

/** The row without a lock: only to learn whose profile to lock first. */
async function findApproval(trx: Knex.Transaction, approvalId: string): Promise<PendingApproval> {
  const row = await PendingApproval.query(trx).findById(approvalId);
  if (!row) throw approvalNotFound(approvalId);
  return row;
}

async function lockApproval(trx: Knex.Transaction, approvalId: string): Promise<PendingApproval> {
  const row = await PendingApproval.query(trx).findById(approvalId).forUpdate();
  if (!row) throw approvalNotFound(approvalId);
  return row;
}

function filesOf(row: PendingApproval): StoredFileRef[] {
  const refs: StoredFileRef[] = [];
  if (isBucket(row.originalBucket)) {
    refs.push({ bucket: row.originalBucket, path: row.originalPath });
    if (row.thumbnailPath) refs.push({ bucket: row.originalBucket, path: row.thumbnailPath });
  }
  if (isBucket(row.watermarkedBucket)) refs.push({ bucket: row.watermarkedBucket, path: row.watermarkedPath });
  return refs;
}

/** A rejected or expired assembly's compiled video row goes with its files (the library never listed it). */
async function dropUnapprovedVideo(trx: Knex.Transaction, row: PendingApproval): Promise<void> {
  const meta = row.metadata as unknown as ApprovalMetadata;
  if (meta.kind !== 'assembly' || !meta.compiledVideoId) return;
  await trx('compiled_videos').where({ id: meta.compiledVideoId, workspace_id: row.workspaceId }).whereRaw("editing_data->>'status' <> 'approved'").delete();
}

/** Inserts the approved original into the project as the row its content type calls for; returns its id. */
async function saveApprovedContent(trx: Knex.Transaction, row: PendingApproval): Promise<string> {
  const meta = row.metadata as unknown as ApprovalMetadata;
  const storage = {
    file_url: fileUrl(row.originalBucket as 'images', row.originalPath),
    file_name: row.fileName,
    storage_bucket: row.originalBucket,
    storage_path: row.originalPath,
    storage_mime: meta.mime,
    storage_size: meta.fileSize,
    thumbnail_path: row.thumbnailPath,
  };
  const base = { project_id: row.projectId, workspace_id: row.workspaceId, ...storage };
  let inserted: { id: string }[];
  switch (meta.kind) {
    case 'image':
      inserted = await trx('images')
        .insert({
          ...base,
          file_size: meta.fileSize,
          width: meta.width,
          height: meta.height,
          original_prompt: meta.originalPrompt,
          refined_prompt: meta.refinedPrompt,
          base_image_url: meta.baseImageUrl,
          format: meta.format,
          aspect_ratio: row.aspectRatio,
          upscaled: meta.upscaled,
        })
        .returning('id');
      break;
    case 'clip':
      inserted = await trx('clips')
        .insert({
          ...base,
          render_id: meta.renderId,
          image_id: meta.renderId ? null : meta.imageId,
          duration: meta.durationSeconds,
          prompt_used: meta.promptUsed,
          movement: meta.effect,
          camera_movement: meta.effect,
          // the specs' clip row records 0: what the clip cost is the ledger's consume row, charged at approval
          credits_used: 0,
          thumbnail_url: row.thumbnailPath ? fileUrl(row.originalBucket as 'clips', row.thumbnailPath) : null,
          file_size: meta.fileSize,
          analysis_data: JSON.stringify({ aspectRatio: meta.aspectRatio, platform: meta.platform, fileSize: meta.fileSize }),
        })
        .returning('id');
      break;
    case 'assembly':
      if (meta.compiledVideoId) {
        // the assembly stored its video row already: approval makes it part of the library
        inserted = await trx('compiled_videos')
          .where({ id: meta.compiledVideoId, project_id: row.projectId, workspace_id: row.workspaceId })
          .update({ editing_data: trx.raw(`editing_data || '{"status":"approved"}'::jsonb`), updated_at: trx.fn.now() })
          .returning('id');
        if (inserted.length > 0) {
          await trx('profiles').where({ id: row.workspaceId }).update({ total_assemblies_used: trx.raw('total_assemblies_used + 1') });
          break;
        }
      }
      inserted = await trx('compiled_videos')
        .insert({
          ...base,
          duration: meta.durationSeconds,
          clip_ids: meta.clipIds,
          editing_data: JSON.stringify({ status: 'approved', platform: meta.platform, aspect_ratio: meta.aspectRatio }),
        })
        .returning('id');
      break;
    default:
      throw ApplicationFailure.create({ message: `Unknown approval content ${JSON.stringify(meta)}`, nonRetryable: true });
  }
  await recordSavedLineage(trx, row, meta, inserted[0].id);
  return inserted[0].id;
}

/** What the saved item was made from, and by which run (the version chain, services/content/lineage.ts). */
async function recordSavedLineage(trx: Knex.Transaction, row: PendingApproval, meta: ApprovalMetadata, itemId: string): Promise<void> {
  const job = row.sourceJobId;
  switch (meta.kind) {
    case 'image': {
      const source = await sourceFromFileUrl(trx, row.workspaceId, meta.baseImageUrl);
      if (source) await recordLineage(trx, { workspaceId: row.workspaceId, itemKind: 'image', itemId, sources: [source], workflowId: job ? imageEditWorkflowId(job) : null });
      return;
    }
    case 'clip': {
      const source = meta.renderId ? { kind: 'render' as const, id: meta.renderId } : meta.imageId ? { kind: 'image' as const, id: meta.imageId } : null;
      if (source) await recordLineage(trx, { workspaceId: row.workspaceId, itemKind: 'clip', itemId, sources: [source], workflowId: job ? clipWorkflowId(job) : null });
      return;
    }
    case 'assembly':
      await recordLineage(trx, {
        workspaceId: row.workspaceId,
        itemKind: 'compiled_video',
        itemId,
        sources: (meta.clipIds ?? []).map((id) => ({ kind: 'clip' as const, id })),
        workflowId: job ? `assembly-${job}` : null,
      });
  }
}

export interface ApprovePendingItemResult {
  /** the saved item; null while the item waits for more approvals */
  contentId: string | null;
  /** absent in results recorded before approval policies (they approved) */
  status?: 'approved' | 'pending';
}

/** The saved item's approvals include `userId`'s, or none were recorded (it was approved before policies). */
async function savedByOrBefore(trx: Knex.Transaction, approvalId: string, userId: string, guest?: GuestDecider): Promise<boolean> {
  if (guest) return linkApproved(trx, guest.reviewLinkId, approvalId);
  const ids = (await trx('approval_decisions').where({ approval_id: approvalId }).pluck('user_id')) as string[];
  return ids.length === 0 || ids.includes(userId);
}

/**
 * Records `actorId`'s approval of the locked pending item (one per person: a retry finds it) and returns where the
 * item stands against its policy. A member the policy does not name is refused.
 */
async function recordApproval(trx: Knex.Transaction, row: PendingApproval, actorId: string, guest?: GuestDecider): Promise<ApprovalProgress> {
  const policy = readApprovalPolicy(row.approvalPolicy);
  const approvers = await workspaceApprovers(trx, row.workspaceId);
  if (guest) {
    // a review link's guests give the item one approval (whoever of them approves); named approvers are still awaited
    const before = approvalProgress(policy, [...(await memberApprovals(trx, row.id)), ...(await guestApproverKeys(trx, row.id))], approvers);
    const after = approvalProgress(policy, [...before.approvedBy, `link:${guest.reviewLinkId}`], approvers);
    await recordGuestDecision(trx, { workspaceId: row.workspaceId, approvalId: row.id, guest, decision: 'approve', outcome: after.met ? 'approved' : 'approval_counted' });
    return after;
  }
  if (!mayApproveUnder(policy, actorId, approvers)) {
    throw ApplicationFailure.create({ message: APPROVAL_POLICY_MSG.notAnApprover, type: APPROVAL_POLICY_CODES.notAnApprover, nonRetryable: true });
  }
  await trx('approval_decisions').insert({ approval_id: row.id, user_id: actorId }).onConflict(['approval_id', 'user_id']).ignore();
  return approvalProgress(policy, [...(await memberApprovals(trx, row.id)), ...(await guestApproverKeys(trx, row.id))], approvers);
}

async function memberApprovals(trx: Knex.Transaction, approvalId: string): Promise<string[]> {
  return (await trx('approval_decisions').where({ approval_id: approvalId }).orderBy([{ column: 'created_at' }, { column: 'user_id' }]).pluck('user_id')) as string[];
}

/** The comment-thread kind of the item an approval saves (services/review/commentItems.ts). */
const SAVED_ITEM_KIND: Record<string, string> = { image: 'image', clip: 'clip', assembly: 'compiled_video' };

/**
 * "Your approval is needed": to the members the item's policy waits for (its named approvers, else everyone who may
 * approve), except the member who started it.
 */
async function notifyApprovalNeeded(trx: Knex.Transaction, item: { id: string; workspaceId: string; projectId: string; fileName: string; createdBy: string | null }): Promise<void> {
  const policy = await workspaceApprovalPolicy(trx, item.workspaceId);
  const approvers = await workspaceApprovers(trx, item.workspaceId);
  const named = policy.kind === 'named' ? policy.userIds.filter((id) => approvers.has(id)) : [];
  const recipients = (named.length > 0 ? named : [...approvers]).filter((id) => id !== item.createdBy);
  await notify(trx, {
    workspaceId: item.workspaceId,
    recipients,
    kind: 'approval_needed',
    item: { kind: 'approval', id: item.id },
    projectId: item.projectId,
    by: item.createdBy,
    text: NOTIFICATION_TEXT.approvalNeeded(item.fileName),
  });
}

/**
 * The member who started the item is told who approved or rejected it (not when they decided themselves). A guest's
 * decision is told to the item's starter and to the member who made the review link, as "Guest: name (e-mail) via
 * link <title>".
 */
async function notifyDecision(trx: Knex.Transaction, row: PendingApproval, decision: 'approved' | 'rejected', actorId: string | null, item: { kind: string; id: string }, guest?: GuestDecider): Promise<void> {
  if (guest) {
    const who = await guestDeciderLabel(trx, guest);
    const link = await reviewLinkOwner(trx, guest.reviewLinkId);
    await notify(trx, {
      workspaceId: row.workspaceId,
      recipients: [row.createdBy, link?.createdBy],
      kind: 'decision',
      item,
      projectId: row.projectId,
      by: null,
      text: decision === 'approved' ? NOTIFICATION_TEXT.approved(who, row.fileName) : NOTIFICATION_TEXT.rejected(who, row.fileName),
    });
    return;
  }
  if (!row.createdBy || !actorId || actorId === row.createdBy) return;
  const who = await personName(trx, actorId);
  await notify(trx, {
    workspaceId: row.workspaceId,
    recipients: [row.createdBy],
    kind: 'decision',
    item,
    projectId: row.projectId,
    by: actorId,
    text: decision === 'approved' ? NOTIFICATION_TEXT.approved(who, row.fileName) : NOTIFICATION_TEXT.rejected(who, row.fileName),
  });
}

export function createApprovalActivities(deps: Pick<ActivityDeps, 'knex' | 'config' | 'storage' | 'logger'>) {
  const windowMs = msToNumber(deps.config.approvalWindow as Parameters<typeof msToNumber>[0]);

  // what a decision or a new item notified is e-mailed after its transaction (never failing the activity)
  const mailNotifications = () => void sendNotificationMail({ knex: deps.knex, config: deps.config, logger: deps.logger }).catch((err: unknown) => deps.logger.warn({ err }, 'notification e-mails not sent'));

  /** The item's pending_approvals row (idempotent on its approval workflow id) and its event, announced once. */
  const recordPending = async (input: NewPendingApproval): Promise<CreatedPendingApproval> => {
    const workflowId = approvalWorkflowId(input.approvalId);
    const deadline = new Date(Date.now() + windowMs);
    const inserted = await deps.knex
      .transaction(async (trx) => {
        // made by a "request changes": the next version of the rejected item, named after it ("terrace (v2).jpg")
        const link = await versionLinkOf(trx, input.workspaceId, input.sourceJobId);
        const givenName = link ? versionFileName(link.previousFileName, link.version, input.fileName, input.metadata.kind) : input.fileName;
        // a name the project already has gets a counter ("mid-a — warm dusk light (2).jpg"); a retry keeps its own
        const stem = givenName.replace(/\.[A-Za-z0-9]{1,5}$/, '');
        const taken = (await trx('pending_approvals')
          .where({ project_id: input.projectId })
          .whereNot({ workflow_id: workflowId })
          .whereRaw('lower(file_name) like ?', [`${stem.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`])
          .pluck('file_name')) as string[];
        const fileName = withCounter(givenName, taken);
        const rows: { id: string; approval_deadline: Date }[] = await trx('pending_approvals')
          .insert({
            id: input.approvalId,
            workspace_id: input.workspaceId,
            // the member who started the generation (the account above is the workspace)
            created_by: input.createdBy ?? null,
            project_id: input.projectId,
            content_type: input.metadata.kind,
            status: 'pending',
            aspect_ratio: input.aspectRatio,
            file_name: fileName,
            original_bucket: input.original.bucket,
            original_path: input.original.path,
            watermarked_bucket: input.watermarked.bucket,
            watermarked_path: input.watermarked.path,
            thumbnail_path: input.thumbnailPath,
            approval_deadline: deadline,
            cost: input.cost,
            remaining_cost: input.cost,
            reservation_id: input.reservationId,
            workflow_id: workflowId,
            source_job_id: input.sourceJobId,
            version: link?.version ?? 1,
            previous_approval_id: link?.previousApprovalId ?? null,
            metadata: JSON.stringify(input.metadata),
            // the item keeps the policy it started with
            approval_policy: JSON.stringify(await workspaceApprovalPolicy(trx, input.workspaceId)),
          })
          .onConflict('workflow_id')
          .ignore()
          .returning(['id', 'approval_deadline']);
        // announced once, by the attempt that inserted it
        if (rows.length > 0) {
          if (link) await carryThreadsOver(trx, link, input.approvalId);
          await publishEvent(trx, input.workspaceId, { kind: 'approval', approvalId: input.approvalId, status: 'pending', contentType: input.metadata.kind, projectId: input.projectId });
          await recordApprovalEvent(
            trx,
            { id: input.approvalId, workspaceId: input.workspaceId, projectId: input.projectId, contentType: input.metadata.kind, fileName, cost: input.cost, approvalDeadline: rows[0].approval_deadline, createdBy: input.createdBy },
            'pending',
          );
          await notifyApprovalNeeded(trx, { id: input.approvalId, workspaceId: input.workspaceId, projectId: input.projectId, fileName, createdBy: input.createdBy ?? null });
        }
        return rows[0];
      })
      .catch((err: unknown) => {
        // the project (or the user) was deleted while the item was generated: no retry can insert it
        if ((err as { code?: unknown }).code === PG_FOREIGN_KEY_VIOLATION) throw new DomainError(404, 'PROJECT_NOT_FOUND', 'Project not found');
        throw err;
      });
    if (inserted) {
      mailNotifications();
      return { approvalId: inserted.id, workflowId, windowMs, approvalDeadline: new Date(inserted.approval_deadline).toISOString() };
    }
    // a retry: the deadline is the one the first attempt stored
    const row = await PendingApproval.query(deps.knex).findById(input.approvalId);
    if (!row) throw new Error(`pending approval ${input.approvalId} neither inserted nor found`);
    return { approvalId: row.id, workflowId, windowMs, approvalDeadline: new Date(row.approvalDeadline).toISOString() };
  };

  return {
    /** Records a generated item as pending (idempotent on its workflow id); the caller then starts its approval workflow. */
    createPendingApproval: (input: NewPendingApproval): Promise<CreatedPendingApproval> => reportingRefusals(() => recordPending(input)),

    /**
     * Records the item as pending, then starts its approval workflow with the worker's client: what a workflow's
     * createPendingApproval and startChild did, in one step, so the generating workflow ends without waiting for
     * a workflow task that only reports the child started. A retry finds the row and the started workflow (the
     * id is never reused, so a finished approval is not started again).
     */
    submitForApproval: (input: SubmitForApprovalInput): Promise<CreatedPendingApproval> =>
      reportingRefusals(async () => {
        const { approvalWorkflow, ...item } = input;
        const created = await recordPending(item);
        try {
          await Context.current().client.workflow.start<ApprovalWorkflow>('approvalWorkflow', {
            workflowId: created.workflowId,
            taskQueue: approvalWorkflow.taskQueue,
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            typedSearchAttributes: approvalWorkflow.searchAttributes,
            args: [{ approvalId: created.approvalId, workspaceId: input.workspaceId, windowMs: created.windowMs }],
          });
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
        return created;
      }),

    /**
     * Records the member's approval and, when it is the last one the item's policy needs, consumes the reservation
     * and saves the original into the project in the same transaction, once: a retry finds the saved content.
     * `status: 'pending'` when the item waits for more approvals (results recorded before policies have no status:
     * they approved).
     */
    approvePendingItem: ({ approvalId, actorId, guest }: { approvalId: string; actorId?: string | null; guest?: GuestDecider }): Promise<ApprovePendingItemResult> =>
      reportingRefusals(async () => {
        const { contentId, watermark } = await deps.knex.transaction(async (trx) => {
          // profile row first, then the item: the lock order of every other credit writer (services/billing/credits.ts)
          const found = await findApproval(trx, approvalId);
          await trx('profiles').where({ id: found.workspaceId }).forUpdate().first('id');
          const row = await lockApproval(trx, approvalId);
          // a retry of the approval that saved it finds it saved (one from before policies recorded no decision);
          // anyone else's approval came after the end
          if (row.status === 'approved' && row.contentId && (!actorId || (await savedByOrBefore(trx, row.id, actorId, guest)))) return { contentId: row.contentId, watermark: null };
          if (row.status !== 'pending') throw notPending(row.status);
          // the item's approval policy: this approval may be one of several it needs (an update from before
          // policies names no actor and approves alone, as then)
          if (actorId) {
            const progress = await recordApproval(trx, row, actorId, guest);
            if (!progress.met) {
              await publishEvent(trx, row.workspaceId, { kind: 'approval', approvalId: row.id, status: 'pending', contentType: row.contentType, projectId: row.projectId });
              return { contentId: null, watermark: null };
            }
          }
          if (row.reservationId) {
            await consumeReservation(trx, {
              reservationId: row.reservationId,
              description: `Approved ${row.contentType}: ${row.fileName}`,
              metadata: { approvalId: row.id, projectId: row.projectId, ...(guest ? { reviewLinkId: guest.reviewLinkId, guest: { name: guest.name, email: guest.email } } : {}) },
              // the approving member; an update from before workspaces names none: the item's starter
              actorId: actorId ?? row.createdBy ?? null,
            });
          }
          const saved = await saveApprovedContent(trx, row);
          // the pending item's comment threads go with it to the saved item
          await moveThreadsToSavedItem(trx, row, saved);
          await trx('pending_approvals')
            .where({ id: row.id })
            .update({ status: 'approved', remaining_cost: 0, content_id: saved, decided_at: trx.fn.now(), decided_by: actorId ?? row.createdBy ?? null });
          // an approval ends a rejection streak and any cooldown it started
          await trx('profiles').where({ id: row.workspaceId }).update({ rejection_streak: 0, rejection_cooldown_until: null, updated_at: trx.fn.now() });
          await publishEvent(trx, row.workspaceId, { kind: 'approval', approvalId: row.id, status: 'approved', contentType: row.contentType, projectId: row.projectId });
          await recordApprovalEvent(trx, row, 'approved', { decidedBy: actorId ?? row.createdBy ?? null, contentId: saved });
          await notifyDecision(trx, row, 'approved', actorId ?? null, { kind: SAVED_ITEM_KIND[row.contentType] ?? 'image', id: saved }, guest);
          await publishEvent(trx, row.workspaceId, { kind: 'content', change: 'added', contentKind: CONTENT_KIND[row.contentType] ?? 'image', projectId: row.projectId, itemId: saved });
          return { contentId: saved, watermark: isBucket(row.watermarkedBucket) ? { bucket: row.watermarkedBucket, path: row.watermarkedPath } : null };
        });
        mailNotifications();
        if (!contentId) return { contentId: null, status: 'pending' };
        if (watermark) await removeStoredFiles(deps.storage.objects, [watermark], deps.logger);
        return { contentId, status: 'approved' };
      }),

    /**
     * Releases the reservation and counts the rejection toward the streak: the 4th in a row carries the
     * warning, the 5th starts the cooldown. Needs a past purchase (REJECTION_REQUIRES_PURCHASE otherwise).
     */
    rejectPendingItem: ({
      approvalId,
      actorId,
      keepPreview = false,
      guest,
    }: {
      approvalId: string;
      actorId?: string | null;
      keepPreview?: boolean;
      guest?: GuestDecider;
    }): Promise<{ warning: string | null; code: string | null }> =>
      reportingRefusals(async () => {
        // a request for changes keeps the watermarked preview (the next version is compared with it); the rest goes
        const rejectedFiles = (row: PendingApproval) => filesOf(row).filter((f) => !(keepPreview && f.bucket === row.watermarkedBucket && f.path === row.watermarkedPath));
        const outcome = await deps.knex.transaction(async (trx) => {
          const found = await findApproval(trx, approvalId);
          const profile = await trx('profiles').where({ id: found.workspaceId }).forUpdate().first('total_credits_purchased', 'rejection_streak');
          const row = await lockApproval(trx, approvalId);
          if (row.status === 'rejected') return { warning: null, code: null, files: [] as StoredFileRef[] };
          if (row.status !== 'pending') throw notPending(row.status);
          if (!profile || Number(profile.total_credits_purchased) <= 0) {
            throw ApplicationFailure.create({ message: MSG.rejectionRequiresPurchase, type: ERROR_CODES.rejectionRequiresPurchase, nonRetryable: true });
          }
          if (row.reservationId) await releaseReservation(trx, { reservationId: row.reservationId, reason: 'rejected', actorId: actorId ?? null });
          await dropUnapprovedVideo(trx, row);
          await trx('pending_approvals').where({ id: row.id }).update({ status: 'rejected', decided_at: trx.fn.now(), decided_by: actorId ?? null });
          await publishEvent(trx, row.workspaceId, { kind: 'approval', approvalId: row.id, status: 'rejected', contentType: row.contentType, projectId: row.projectId });
          await recordApprovalEvent(trx, row, 'rejected', { decidedBy: actorId ?? null });
          await notifyDecision(trx, row, 'rejected', actorId ?? null, { kind: 'approval', id: row.id }, guest);
          const streak = Number(profile.rejection_streak) + 1;
          const cooldown = streak >= REJECTION_STREAK_COOLDOWN_AT;
          await trx('profiles')
            .where({ id: row.workspaceId })
            .update({
              // the cooldown is the streak's consequence: counting starts again after it
              rejection_streak: cooldown ? 0 : streak,
              rejection_cooldown_until: cooldown ? new Date(Date.now() + REJECTION_COOLDOWN_MS) : trx.raw('rejection_cooldown_until'),
              updated_at: trx.fn.now(),
            });
          if (cooldown) return { warning: MSG.rejectionStreakCooldown, code: ERROR_CODES.rejectionStreakCooldown, files: rejectedFiles(row) };
          if (streak === REJECTION_STREAK_WARNING_AT) return { warning: MSG.rejectionStreakWarning, code: ERROR_CODES.rejectionStreakWarning, files: rejectedFiles(row) };
          return { warning: null, code: null, files: rejectedFiles(row) };
        });
        mailNotifications();
        await removeStoredFiles(deps.storage.objects, outcome.files, deps.logger);
        return { warning: outcome.warning, code: outcome.code };
      }),

    /** The window ended: release the reservation, mark the item expired, remove its files. */
    expirePendingItem: ({ approvalId }: { approvalId: string }): Promise<void> =>
      reportingRefusals(async () => {
        const files = await deps.knex.transaction(async (trx) => {
          const found = await PendingApproval.query(trx).findById(approvalId);
          if (!found) return [];
          await trx('profiles').where({ id: found.workspaceId }).forUpdate().first('id');
          const row = await lockApproval(trx, approvalId);
          if (row.status !== 'pending') return [];
          // nobody acted: a system release (no actor recorded)
          if (row.reservationId) await releaseReservation(trx, { reservationId: row.reservationId, reason: 'expired', actorId: null });
          await dropUnapprovedVideo(trx, row);
          await trx('pending_approvals').where({ id: row.id }).update({ status: 'expired', decided_at: trx.fn.now() });
          await publishEvent(trx, row.workspaceId, { kind: 'approval', approvalId: row.id, status: 'expired', contentType: row.contentType, projectId: row.projectId });
          await recordApprovalEvent(trx, row, 'expired');
          return filesOf(row);
        });
        await removeStoredFiles(deps.storage.objects, files, deps.logger);
      }),
  };
}
