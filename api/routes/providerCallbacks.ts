import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { rawBody, rawBodyOf } from '../middleware/rawBody';
import { parseQuery, uuid } from '../validation';
import { describeRoute, errorBody } from '../openapi/describe';
import { falWebhookKeysFrom } from '../../providers/fal/webhookSignature';
import { PROVIDER_CALLBACK_OUTCOMES, handleFalCallback } from '../../services/generation/providerCallbacks';
import { getTemporalClient } from '../../services/platform/temporalClient';

export const FAL_CALLBACK_PATH = '/api/provider-callbacks/fal';
const CALLBACK_MAX_BYTES = 1024 * 1024;

const callbackQuery = z
  .object({
    clip: uuid.optional().meta({ description: 'The clip job the callback is for (set by the submit)' }),
    image: uuid.optional().meta({ description: 'The image edit job the callback is for (set by the submit)' }),
  })
  .refine((q) => (q.clip === undefined) !== (q.image === undefined), { message: 'Name one job: clip or image' });
const callbackHeaders = z.object({
  'x-fal-webhook-request-id': z.string().optional().meta({ description: "fal's request id" }),
  'x-fal-webhook-user-id': z.string().optional().meta({ description: "fal's user id" }),
  'x-fal-webhook-timestamp': z.string().optional().meta({ description: 'Unix seconds; refused beyond 300 s from now' }),
  'x-fal-webhook-signature': z.string().optional().meta({ description: 'Hex ED25519 signature over request id, user id, timestamp and the sha256 of the body, by a key of fal\'s JWKS' }),
});

/** fal's webhook: a hosted job (a clip's, or an image edit's edit or upscale) ended (providers/fal/webhookSignature.ts, services/generation/providerCallbacks.ts). */
export function providerCallbacksRouter(deps: Pick<AppDeps, 'knex' | 'config' | 'logger'>): Router {
  const router = new Router();
  // one key set per app, fetched on the first callback and kept
  const keys = falWebhookKeysFrom(deps.config.falWebhookJwksUrl);
  const temporal = () => getTemporalClient(deps.config);

  describeRoute(router, {
    method: 'post',
    path: FAL_CALLBACK_PATH,
    tag: 'Generation',
    summary: "fal's callback when a hosted job ends: verified by signature, then the waiting workflow is signalled once",
    description:
      'Called by fal (`fal_webhook`, given with the submit when FAL_WEBHOOK_BASE_URL is set). A request whose ED25519 signature does not verify against fal\'s keys, or whose timestamp is more than 300 s from now, is refused with 401 and changes nothing. A verified callback for an unknown job, another request, a job that has ended or one already received is answered 200 and changes nothing.',
    access: 'signature',
    headers: callbackHeaders,
    query: callbackQuery,
    body: { contentType: 'application/json', schema: z.looseObject({}), description: "fal's webhook body ({ request_id, status, payload }), read as raw bytes" },
    responses: {
      200: z.object({ received: z.literal(true), outcome: z.enum(PROVIDER_CALLBACK_OUTCOMES) }),
      400: { description: 'No valid job in the query (one of clip or image)', schema: errorBody },
      401: { description: 'The signature does not verify, or the timestamp is too far from now', schema: errorBody },
      409: { description: 'The job has not recorded its provider request yet (fal retries)', schema: errorBody },
      503: { description: "fal's keys could not be read (fal retries)", schema: errorBody },
    },
  });
  router.post(FAL_CALLBACK_PATH, rawBody({ limitBytes: CALLBACK_MAX_BYTES }), async (ctx) => {
    const { clip, image } = parseQuery(ctx, callbackQuery);
    const target = clip !== undefined ? { kind: 'clip' as const, jobId: clip } : { kind: 'image' as const, jobId: image as string };
    const result = await handleFalCallback({ knex: deps.knex, keys, temporal, logger: deps.logger }, { target, headers: ctx.req.headers, body: rawBodyOf(ctx) });
    ctx.body = { received: true, outcome: result.outcome };
  });

  return router;
}
