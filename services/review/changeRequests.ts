/**
 * "Request changes" on a pending item (issue 42, acceptance 2; DESIGN.md "Review"): the specs' rejection, then a new
 * job from the same source with the request folded in, whose item is the next version of the rejected one.
 *
 * Order, so that a refusal leaves everything as it was: first everything the new job needs is settled (its source
 * still there, its prompt within bounds, its settings valid) and the rules it will meet are asked as they will stand
 * once the item is rejected (a past purchase to reject at all, no cooldown, not the rejection that would start one,
 * credits and a place in the queue, for a clip no other clip of the reviewer's running). Then the item's approval
 * workflow rejects it under the specs' rules unchanged (its refusal ends the request: nothing starts). Then the
 * request is kept in the item's thread, recorded with the job id it will start, and the job starts; its item, when
 * recorded, takes the next version and the thread (services/review/versionChain.ts). Should the start still be
 * refused (a start by someone else took the credits in between), the rejection stands and the answer says why.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  CHANGE_REQUEST_CODES,
  CHANGE_REQUEST_MSG,
  clipGuidance,
  promptWithRequest,
  requestRoom,
  type ChangeRequestContentType,
  type ChangeRequestResponse,
} from '../../domain/changeRequests';
import { CLIP_ERROR_CODES, CLIP_MESSAGES, aspectForPlatform, parsePlatform, parseVideoEffect, DEFAULT_CLIP_DURATION_SECONDS } from '../../domain/clipGeneration';
import { COMMENT_MAX_CHARS, commentPinProblem, isTimedItem, type CommentPin } from '../../domain/comments';
import { REJECTION_STREAK_COOLDOWN_AT } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import { IMAGE_EDIT_DEFAULTS, IMAGE_EDIT_FORMATS, IMAGE_EDIT_QUALITIES, IMAGE_PROMPT_MAX_LENGTH, imageEditWorkflowId } from '../../domain/imageEdit';
import { ERROR_CODES, MSG } from '../../domain/messages';
import type { ApprovalMetadata, ClipApprovalMetadata, ImageApprovalMetadata } from '../../domain/approvals';
import { canCreateAfterRelease, InsufficientCreditsError, PendingLimitReachedError } from '../billing/credits';
import type { ApprovalService } from '../generation/approvals';
import { activeClipJobId, workspaceClipCapReached } from '../generation/clipAdmission';
import type { ImageEditRequest, ImageEditService } from '../generation/imageEdit';
import type { StartClipRequest, VideoGenerationService } from '../generation/videoGeneration';
import type { CommentActor, CommentService } from './comments';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** What a clip's guidance may hold (the start call's bound on its prompt). */
const CLIP_GUIDANCE_MAX_LENGTH = 2000;

export interface ChangeRequestInput {
  request: string;
  /** where on the picture (or when, on a clip) the change is wanted */
  pin?: CommentPin | null;
  /** a clip's settings for the next version (its effect and platform); the earlier ones when absent */
  settings?: { effect?: string | null; platform?: string | null } | null;
}

export interface ChangeRequestDeps {
  knex: Knex;
  approvals: ApprovalService;
  comments: CommentService;
  imageEdits: ImageEditService;
  clips: VideoGenerationService;
}

interface PendingRow {
  id: string;
  workspace_id: string;
  project_id: string;
  status: string;
  content_type: string;
  remaining_cost: number;
  approval_deadline: Date;
  source_job_id: string | null;
  version: number;
  metadata: ApprovalMetadata;
}

/** The next job, ready to start once the item is rejected. */
type NextJob =
  | { kind: 'image'; request: ImageEditRequest; settings: Record<string, unknown> }
  | { kind: 'clip'; request: StartClipRequest; settings: Record<string, unknown> };

function notFound(): DomainError {
  return new DomainError(404, 'APPROVAL_NOT_FOUND', 'Approval not found');
}

function checkedRequest(value: string): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (!text) throw new DomainError(400, 'VALIDATION_ERROR', CHANGE_REQUEST_MSG.requestRequired);
  if (text.length > COMMENT_MAX_CHARS) throw new DomainError(400, 'VALIDATION_ERROR', CHANGE_REQUEST_MSG.requestTooLong);
  return text;
}

function sourceGone(): DomainError {
  return new DomainError(409, CHANGE_REQUEST_CODES.sourceGone, CHANGE_REQUEST_MSG.sourceGone);
}

/** A "not found" of the source while the next job is prepared means it was deleted since the item was made. */
async function sourceOrGone<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof DomainError && err.status === 404) throw sourceGone();
    throw err;
  }
}

function oneOf<T extends string>(values: readonly T[], value: unknown, fallback: T): T {
  return typeof value === 'string' && (values as readonly string[]).includes(value) ? (value as T) : fallback;
}

export class ChangeRequestService {
  constructor(private readonly deps: ChangeRequestDeps) {}

  /** The project a pending item belongs to (the route takes the workspace from it); null for an unknown id. */
  projectOf(approvalId: string): Promise<string | null> {
    return this.deps.approvals.projectOf(approvalId);
  }

  async request(actor: CommentActor, approvalId: string, input: ChangeRequestInput): Promise<ChangeRequestResponse> {
    const { knex } = this.deps;
    const text = checkedRequest(input.request);
    if (!UUID.test(approvalId)) throw notFound();
    const row = (await knex('pending_approvals').where({ id: approvalId, workspace_id: actor.workspaceId }).first()) as PendingRow | undefined;
    if (!row) throw notFound();
    if (row.status !== 'pending' || new Date(row.approval_deadline).getTime() <= Date.now()) {
      throw new DomainError(409, 'APPROVAL_NOT_PENDING', 'This item is no longer pending');
    }
    if (row.content_type !== 'image' && row.content_type !== 'clip') throw new DomainError(409, CHANGE_REQUEST_CODES.notRequestable, CHANGE_REQUEST_MSG.notRequestable);
    const pin = input.pin ?? null;
    if (pin) {
      const problem = commentPinProblem(pin, isTimedItem('approval', row.content_type));
      if (problem) throw new DomainError(400, 'COMMENT_PIN_INVALID', problem);
    }

    const next = row.content_type === 'image' ? await this.nextImage(actor, row, text) : await this.nextClip(actor, row, text, input.settings ?? null);
    await this.checkRules(actor, row, next.kind);

    // the specs' rejection, by the item's approval workflow: its refusal (no purchase yet, decided meanwhile) ends here
    const decision = await this.deps.approvals.reject(actor.workspaceId, approvalId, actor.userId, { keepPreview: true, ...(actor.guest ? { guest: actor.guest } : {}) });

    // the request in the item's thread (it carries over to the next version), then the job it starts
    // (should the item's threads be full, the request is still kept below and folded into the new job)
    const thread = await this.deps.comments.open(actor, approvalId, { body: text, pin }).catch((err: unknown) => {
      if (err instanceof DomainError) return null;
      throw err;
    });
    const nextJobId = randomUUID();
    const [recorded] = (await knex('change_requests')
      .insert({
        workspace_id: actor.workspaceId,
        approval_id: approvalId,
        requested_by: actor.userId,
        comment_id: thread?.comments[0]?.id ?? null,
        request: text,
        settings: JSON.stringify(next.settings),
        next_job_kind: next.kind,
        next_job_id: nextJobId,
      })
      .returning('id')) as Array<{ id: string }>;

    const answer: ChangeRequestResponse = {
      success: true,
      warning: decision.warning,
      code: decision.code,
      request: { id: recorded.id, thread_id: thread?.id ?? null },
      next: null,
      next_error: null,
    };
    try {
      if (next.kind === 'image') await this.deps.imageEdits.start(actor.workspaceId, next.request, actor.userId, nextJobId);
      else await this.deps.clips.start(actor.workspaceId, next.request, actor.userId, nextJobId);
      answer.next = { kind: next.kind, job_id: nextJobId, version: Number(row.version) + 1 };
    } catch (err) {
      const refusal = err instanceof DomainError ? err : new DomainError(503, 'CHANGES_START_FAILED', MSG.somethingWentWrong);
      await knex('change_requests').where({ id: recorded.id }).update({ start_error: refusal.message });
      answer.next_error = { code: refusal.code, error: refusal.message };
      if (!(err instanceof DomainError)) throw err;
    }
    return answer;
  }

  /** An image edit of the same base image, with the job's recorded settings and the request added to its prompt. */
  private async nextImage(actor: CommentActor, row: PendingRow, text: string): Promise<NextJob> {
    const meta = row.metadata as ImageApprovalMetadata;
    const original = typeof meta.originalPrompt === 'string' ? meta.originalPrompt : '';
    const prompt = promptWithRequest(original, text);
    if (prompt.length > IMAGE_PROMPT_MAX_LENGTH) throw new DomainError(400, CHANGE_REQUEST_CODES.promptTooLong, CHANGE_REQUEST_MSG.promptTooLong(requestRoom(original)));
    const edit = row.source_job_id
      ? ((await this.deps.knex('ai_image_edits').where({ workflow_id: imageEditWorkflowId(row.source_job_id), workspace_id: actor.workspaceId }).first('edit_data')) as
          | { edit_data: Record<string, unknown> | null }
          | undefined)
      : undefined;
    const data = edit?.edit_data ?? {};
    const recordedSource = data.source as { id?: unknown } | undefined;
    const baseImage = typeof recordedSource?.id === 'string' ? recordedSource.id : meta.baseImageUrl;
    if (!baseImage) throw sourceGone();
    // the source must still be there before anything is decided
    const source = await sourceOrGone(() => this.deps.imageEdits.resolveSource(actor.workspaceId, baseImage, null));
    const request: ImageEditRequest = {
      projectId: source.projectId,
      userIntent: typeof data.userIntent === 'string' ? data.userIntent : null,
      platform: typeof data.platform === 'string' && data.platform ? data.platform : 'web',
      prompt,
      baseImage: source.id,
      imageDescription: null,
      validateRefinement: true,
      format: oneOf(IMAGE_EDIT_FORMATS, data.format ?? meta.format, IMAGE_EDIT_DEFAULTS.format),
      quality: oneOf(IMAGE_EDIT_QUALITIES, data.quality, IMAGE_EDIT_DEFAULTS.quality),
      upscaleScale: typeof data.upscaleScale === 'number' && Number.isInteger(data.upscaleScale) && data.upscaleScale >= 1 && data.upscaleScale <= 4 ? data.upscaleScale : IMAGE_EDIT_DEFAULTS.upscaleScale,
    };
    return { kind: 'image', request, settings: { prompt, format: request.format, quality: request.quality, upscaleScale: request.upscaleScale } };
  }

  /** A clip of the same render or image, with its effect and platform (or the reviewer's), and the request as guidance. */
  private async nextClip(actor: CommentActor, row: PendingRow, text: string, settings: ChangeRequestInput['settings']): Promise<NextJob> {
    const meta = row.metadata as ClipApprovalMetadata;
    const job = row.source_job_id
      ? ((await this.deps.knex('video_generation_jobs').where({ id: row.source_job_id, workspace_id: actor.workspaceId }).first('options', 'render_id', 'image_id', 'project_id')) as
          | { options: Record<string, unknown>; render_id: string | null; image_id: string | null; project_id: string }
          | undefined)
      : undefined;
    const options = job?.options ?? {};
    const effect = parseVideoEffect(String(settings?.effect ?? options.effect ?? meta.effect ?? ''));
    const platform = parsePlatform(String(settings?.platform ?? options.platform ?? meta.platform ?? ''));
    if (!effect || !platform) throw new DomainError(400, CHANGE_REQUEST_CODES.settingsInvalid, CHANGE_REQUEST_MSG.settingsInvalid);
    const previous = typeof options.prompt === 'string' ? options.prompt : (meta.promptUsed ?? null);
    const guidance = clipGuidance(previous, text);
    if (guidance.length > CLIP_GUIDANCE_MAX_LENGTH) {
      const room = CLIP_GUIDANCE_MAX_LENGTH - clipGuidance(previous, 'x').length + 1;
      throw new DomainError(400, CHANGE_REQUEST_CODES.promptTooLong, CHANGE_REQUEST_MSG.promptTooLong(Math.max(0, room)));
    }
    const renderId = job ? job.render_id : meta.renderId;
    const imageId = job ? job.image_id : meta.imageId;
    if (!renderId && !imageId) throw sourceGone();
    const projectId = job?.project_id ?? row.project_id;
    await sourceOrGone(() => this.deps.clips.resolveSource(actor.workspaceId, { projectId, renderId, imageId }));
    const request: StartClipRequest = {
      projectId,
      renderId,
      imageId,
      imageUrl: null,
      effect,
      platform,
      aspectRatio: aspectForPlatform(platform),
      durationSeconds: typeof options.durationSeconds === 'number' ? options.durationSeconds : (meta.durationSeconds ?? DEFAULT_CLIP_DURATION_SECONDS),
      prompt: guidance,
      isTemporaryImage: options.isTemporaryImage === true,
      startedBy: options.startedBy === 'portrait' ? 'portrait' : 'start',
    };
    return { kind: 'clip', request, settings: { effect, platform, aspectRatio: request.aspectRatio, prompt: guidance } };
  }

  /**
   * The rules, as they will stand once this item is rejected: a refusal here leaves the item pending and starts
   * nothing. The rejection's own rules (a past purchase) are asked again by the approval workflow.
   */
  private async checkRules(actor: CommentActor, row: PendingRow, kind: ChangeRequestContentType): Promise<void> {
    const { knex } = this.deps;
    const profile = (await knex('profiles').where({ id: actor.workspaceId }).first('total_credits_purchased', 'rejection_streak', 'rejection_cooldown_until')) as
      | { total_credits_purchased: number; rejection_streak: number; rejection_cooldown_until: Date | null }
      | undefined;
    if (!profile || Number(profile.total_credits_purchased) <= 0) throw new DomainError(403, ERROR_CODES.rejectionRequiresPurchase, MSG.rejectionRequiresPurchase);
    if (profile.rejection_cooldown_until && new Date(profile.rejection_cooldown_until).getTime() > Date.now()) {
      throw new DomainError(429, ERROR_CODES.rejectionStreakCooldown, MSG.rejectionStreakCooldown);
    }
    if (Number(profile.rejection_streak) + 1 >= REJECTION_STREAK_COOLDOWN_AT) throw new DomainError(409, CHANGE_REQUEST_CODES.wouldPause, CHANGE_REQUEST_MSG.wouldPause);
    if (kind === 'clip') {
      // the clip that made this item is done with it, though its row may read processing a moment longer
      const replaced = row.source_job_id && UUID.test(row.source_job_id) ? [row.source_job_id] : [];
      if (await activeClipJobId(knex, actor.workspaceId, actor.userId, replaced)) throw new DomainError(409, ERROR_CODES.singleClipRestriction, MSG.waitForCurrentGeneration);
      const cap = await workspaceClipCapReached(knex, actor.workspaceId, replaced);
      if (cap !== null) throw new DomainError(409, CLIP_ERROR_CODES.workspaceClipCap, CLIP_MESSAGES.workspaceClipCap(cap));
    }
    const check = await canCreateAfterRelease(knex, actor.workspaceId, kind, Number(row.remaining_cost));
    if (check.canCreate) return;
    if (check.reason === 'pending_limit') throw new PendingLimitReachedError(check.limit);
    if (kind === 'clip') {
      if (check.reason === 'pending_cost') throw new DomainError(400, CLIP_ERROR_CODES.pendingCost, CLIP_MESSAGES.pendingCost);
      throw new DomainError(400, ERROR_CODES.insufficientCredits, CLIP_MESSAGES.insufficientCredits(Math.max(0, check.available), check.cost));
    }
    throw new InsufficientCreditsError(MSG.insufficientCreditsImage);
  }
}
