import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, requireAuth } from '../middleware/auth';
import { workspaceGrant } from '../workspace';
import { readSingleFileForm } from '../multipart';
import { parse } from '../validation';
import { MSG } from '../../domain/messages';
import { contentServicesFor } from '../../services/content/contentServices';
import type { RenderUploadResult, StagedRender } from '../../services/content/renders';
import { answers, describeRoute, errorBody } from '../openapi/describe';
import { contentItem } from './projects';

const uploadFields = z.object({
  projectId: z.string({ error: 'projectId is required' }).min(1, 'projectId is required'),
  userId: z.string().optional(),
});

/** The form as documented: the fields above and the file (its bytes are checked by content, not by name or type). */
const uploadForm = uploadFields.extend({ file: z.string().meta({ format: 'binary', description: 'A JPEG, PNG, GIF or WebP image of at most 150 MB' }) });
const uploadAnswer = answers<RenderUploadResult>()(
  z.object({
    success: z.literal(true),
    duplicate: z.boolean().meta({ description: 'true when the same bytes are already in this project: nothing was added, and render is the existing item' }),
    url: z.string(),
    render: contentItem.meta({ description: 'The render stored by this upload, or for a duplicate the project item that already holds these bytes' }),
    processingInfo: z.object({
      width: z.number().int(),
      height: z.number().int(),
      aspectRatio: z.string(),
      fileSize: z.number().int(),
      mimeType: z.string(),
      checksum: z.string(),
      thumbnailUrl: z.string().nullable(),
      duplicate: z.boolean(),
    }),
  }),
);

/**
 * POST /api/upload/renders (multipart: file, projectId, userId): one render streamed into the project, by a member of
 * its workspace who may edit (services/workspaces/access.ts); the render belongs to the workspace.
 */
export function uploadsRouter(deps: AppDeps): Router {
  const { uploads } = contentServicesFor(deps);
  const router = new Router();

  describeRoute(router, {
    method: 'post',
    path: '/api/upload/renders',
    tag: 'Projects',
    summary: 'Upload one render into a project (streamed, checked by content)',
    access: 'session',
    workspace: 'edit',
    body: { contentType: 'multipart/form-data', schema: uploadForm },
    responses: {
      200: uploadAnswer,
      400: { description: "A file that is not an image, a video ('Video uploads are not supported...'), or an image that cannot be read; error names the file and the reason", schema: errorBody },
      403: { description: "The user's role in the project's workspace does not allow uploads (a viewer): nothing is stored", schema: errorBody },
      404: { description: 'No such project in this workspace (or the workspace is not one of the user\'s)', schema: errorBody },
      409: { description: 'The file was stored but not saved within 10 minutes and was removed as abandoned (UPLOAD_EXPIRED): upload it again', schema: errorBody },
      413: { description: "File too large: <n>MB. Maximum size is 150MB.", schema: errorBody },
    },
  });
  router.post('/api/upload/renders', requireAuth(deps, { unauthenticatedMessage: MSG.loginToUpload }), async (ctx) => {
    uploads.assertRequestSize(ctx.get('content-length') ? Number(ctx.get('content-length')) : undefined);
    // the workspace and the role are decided before a byte is stored: the project's workspace when projectId comes
    // before the file (as the app sends it), else the request's workspace (X-Workspace-Id, else the personal one)
    let stagedIn: { workspaceId: string; projectId: string | undefined } | null = null;
    const { fields, file: staged } = await readSingleFileForm(
      ctx.req,
      'file',
      async (file, early) => {
        // fields sent before the file are checked before a byte is stored
        assertSelf(ctx, early.userId);
        const grant = await workspaceGrant(ctx, deps, 'edit', { projectId: early.projectId });
        stagedIn = { workspaceId: grant.workspaceId, projectId: early.projectId };
        // stored under the workspace's folder: it is the account that owns the render
        return uploads.stage(grant.workspaceId, file, early.projectId);
      },
      (file) => uploads.discard(file),
    );
    let current: StagedRender = staged;
    try {
      const input = parse(uploadFields, fields);
      assertSelf(ctx, input.userId);
      const before = stagedIn as { workspaceId: string; projectId: string | undefined } | null;
      // a projectId that came after the file names the workspace only now: asked again, and the file moves there
      const workspaceId =
        before && before.projectId === input.projectId ? before.workspaceId : (await workspaceGrant(ctx, deps, 'edit', { projectId: input.projectId })).workspaceId;
      if (before && before.workspaceId !== workspaceId) current = await uploads.restage(staged, workspaceId);
      ctx.body = await uploads.complete(workspaceId, input.projectId, current);
    } catch (err) {
      await uploads.discard(current);
      throw err;
    }
  });

  return router;
}
