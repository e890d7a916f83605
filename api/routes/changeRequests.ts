import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { requireAuth } from '../middleware/auth';
import { parseBody } from '../validation';
import { workspaceGrant } from '../workspace';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { commentPinBody } from './comments';
import { COMMENT_MAX_CHARS } from '../../domain/comments';
import { PLATFORMS, VIDEO_EFFECTS } from '../../domain/constants';
import { CHANGE_REQUEST_MSG, type ChangeRequestResponse } from '../../domain/changeRequests';
import { contentServicesFor } from '../../services/content/contentServices';
import { defaultClipQueues, VideoGenerationService } from '../../services/generation/videoGeneration';
import { getTemporalClient } from '../../services/platform/temporalClient';
import { sendNotificationMail } from '../../services/review/notificationMail';
import { ChangeRequestService } from '../../services/review/changeRequests';
import type { ApprovalService } from '../../services/generation/approvals';
import { CommentService } from '../../services/review/comments';
import { approvalServiceFor, imageEditServiceFor } from '../generationServices';

const requestBody = z
  .object({
    approvalId: z.string({ error: 'approvalId is required' }).trim().min(1, 'approvalId is required'),
    request: z
      .string({ error: CHANGE_REQUEST_MSG.requestRequired })
      .refine((v) => v.trim() !== '', CHANGE_REQUEST_MSG.requestRequired)
      .refine((v) => v.trim().length <= COMMENT_MAX_CHARS, CHANGE_REQUEST_MSG.requestTooLong)
      .meta({ description: `What should change, plain text up to ${COMMENT_MAX_CHARS} characters: kept as a comment on the item, folded into the new job` }),
    pin: commentPinBody.nullable().optional(),
    settings: z
      .object({
        effect: z.string().nullable().optional().meta({ description: `One of ${VIDEO_EFFECTS.join(', ')}` }),
        platform: z.string().nullable().optional().meta({ description: `One of ${PLATFORMS.join(', ')}` }),
      })
      .strict()
      .nullable()
      .optional()
      .meta({ description: "A clip's settings for its next version; the earlier ones where absent" }),
  })
  .strict();

const requestAnswer = answers<ChangeRequestResponse>()(
  z.object({
    success: z.literal(true),
    warning: z.string().nullable(),
    code: z.string().nullable(),
    request: z.object({ id: z.string(), thread_id: z.string().nullable() }),
    next: z
      .object({ kind: z.enum(['image', 'clip']), job_id: z.string(), version: z.number().int() })
      .nullable()
      .meta({ description: 'The job making the next version; null when it could not start (the rejection stands, next_error says why)' }),
    next_error: z.object({ code: z.string(), error: z.string() }).nullable(),
  }),
);

/**
 * POST /api/approvals/request-changes (issue 42 item 2, DESIGN.md "Review"): the specs' rejection of a pending image
 * or clip with a request, and its next version started from the same source. 'approve' in the item's workspace, as
 * Reject is.
 */
/** The services a request for changes needs (also the guests' through review links, api/routes/guestReview.ts). */
export function changeRequestServices(deps: AppDeps): { approvals: ApprovalService; comments: CommentService; changeRequests: ChangeRequestService } {
  const { storage } = contentServicesFor(deps);
  const temporal = () => getTemporalClient(deps.config);
  const approvals = approvalServiceFor(deps);
  const comments = new CommentService(deps.knex);
  const changeRequests = new ChangeRequestService({
    knex: deps.knex,
    approvals,
    comments,
    imageEdits: imageEditServiceFor(deps),
    clips: new VideoGenerationService({ knex: deps.knex, logger: deps.logger, client: temporal, queues: defaultClipQueues(deps.taskQueues), urls: storage.urls }),
  });
  return { approvals, comments, changeRequests };
}

export function changeRequestsRouter(deps: AppDeps): Router {
  const service = changeRequestServices(deps).changeRequests;
  const mailNotifications = () => void sendNotificationMail({ knex: deps.knex, config: deps.config, logger: deps.logger }).catch((err: unknown) => deps.logger.warn({ err }, 'notification e-mails not sent'));
  const router = new Router();
  router.use(requireAuth(deps));

  describeRoute(router, {
    method: 'post',
    path: '/api/approvals/request-changes',
    tag: 'Approvals',
    summary: 'Reject a pending image or clip with a request for changes, and start its next version from the same source',
    description:
      "The rejection follows the specs' rules unchanged (a past purchase is needed, the streak counts, the reservation is released). The new job reserves its own credits; for an image the prompt becomes the original prompt plus the request, for a clip the same effect and settings (or the ones sent) with the request as guidance. Its item is the next version (v2, v3 ...) and takes the item's comment threads. Refused before anything changes when the rules would not let the new job start.",
    access: 'session',
    workspace: 'approve',
    body: requestBody,
    responses: {
      200: requestAnswer,
      400: { description: 'No request text, too long, a bad pin or clip setting, or not enough credits for the new job', schema: errorBody },
      403: { description: 'Rejections need a past purchase (REJECTION_REQUIRES_PURCHASE), or the role may not decide (viewer): nothing changes', schema: errorBody },
      404: { description: 'No pending approval with this id in this workspace, or the caller is not a member of it', schema: errorBody },
      409: {
        description:
          'The item is no longer pending, is an assembled video, its source was deleted, this rejection would pause generation, the pending limit is reached, or another clip of the caller is running: nothing changes',
        schema: errorBody,
      },
      429: { description: 'Generation is paused after repeated rejections (REJECTION_STREAK_COOLDOWN): nothing changes', schema: errorBody },
    },
  });
  router.post('/api/approvals/request-changes', async (ctx) => {
    const body = parseBody(ctx, requestBody);
    const grant = await workspaceGrant(ctx, deps, 'approve', { projectId: await service.projectOf(body.approvalId) });
    ctx.body = await service.request(grant, body.approvalId, { request: body.request, pin: body.pin ?? null, settings: body.settings ?? null });
    mailNotifications();
  });

  return router;
}
