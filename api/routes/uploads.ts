import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, currentUser, requireAuth } from '../middleware/auth';
import { readSingleFileForm } from '../multipart';
import { parse } from '../validation';
import { MSG } from '../../domain/messages';
import { contentServicesFor } from '../../services/content/contentServices';
import type { RenderUploadResult } from '../../services/content/renders';
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

/** POST /api/upload/renders (multipart: file, projectId, userId): one render streamed into the project. */
export function uploadsRouter(deps: AppDeps): Router {
  const { uploads } = contentServicesFor(deps);
  const router = new Router();

  describeRoute(router, {
    method: 'post',
    path: '/api/upload/renders',
    tag: 'Projects',
    summary: 'Upload one render into a project (streamed, checked by content)',
    access: 'session',
    body: { contentType: 'multipart/form-data', schema: uploadForm },
    responses: {
      200: uploadAnswer,
      400: { description: "A file that is not an image, a video ('Video uploads are not supported...'), or an image that cannot be read; error names the file and the reason", schema: errorBody },
      404: { description: 'No such project of this user', schema: errorBody },
      413: { description: "File too large: <n>MB. Maximum size is 150MB.", schema: errorBody },
    },
  });
  router.post('/api/upload/renders', requireAuth(deps, { unauthenticatedMessage: MSG.loginToUpload }), async (ctx) => {
    const user = currentUser(ctx);
    uploads.assertRequestSize(ctx.get('content-length') ? Number(ctx.get('content-length')) : undefined);
    const { fields, file: staged } = await readSingleFileForm(
      ctx.req,
      'file',
      async (file, early) => {
        // fields sent before the file are checked before a byte is stored
        assertSelf(ctx, early.userId);
        return uploads.stage(user.id, file, early.projectId);
      },
      (file) => uploads.discard(file),
    );
    try {
      const input = parse(uploadFields, fields);
      assertSelf(ctx, input.userId);
      ctx.body = await uploads.complete(user.id, input.projectId, staged);
    } catch (err) {
      await uploads.discard(staged);
      throw err;
    }
  });

  return router;
}
