import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { assertSelf, currentUser, requireAuth } from '../middleware/auth';
import { readSingleFileForm } from '../multipart';
import { parse } from '../validation';
import { MSG } from '../../domain/messages';
import { contentServicesFor } from '../../services/contentServices';

const uploadFields = z.object({
  projectId: z.string({ error: 'projectId is required' }).min(1, 'projectId is required'),
  userId: z.string().optional(),
});

/** POST /api/upload/renders (multipart: file, projectId, userId): one render streamed into the project. */
export function uploadsRouter(deps: AppDeps): Router {
  const { uploads } = contentServicesFor(deps);
  const router = new Router();

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
