import Router from '@koa/router';
import { z } from 'zod';
import { ACCESS_TOKEN_MSG, ACCESS_TOKEN_NAME_MAX, ACCESS_TOKENS_PER_USER, TOKEN_SCOPES } from '../../domain/accessTokens';
import { createAccessToken, listAccessTokens, revokeAccessToken, type AccessTokenView } from '../../services/accounts/accessTokens';
import type { AppDeps } from '../deps';
import { currentUser, requireAuth } from '../middleware/auth';
import { answers, describeRoute, errorBody, okBody, timestamp } from '../openapi/describe';
import { parse, parseBody, requiredString, singleLine, uuid } from '../validation';

const createBody = z.strictObject({
  name: singleLine(requiredString('Token name'), 'Token name').max(ACCESS_TOKEN_NAME_MAX * 4, { error: ACCESS_TOKEN_MSG.nameTooLong }),
  scopes: z.array(z.string({ error: ACCESS_TOKEN_MSG.scopeUnknown }), { error: ACCESS_TOKEN_MSG.scopesRequired }).max(TOKEN_SCOPES.length * 2, { error: ACCESS_TOKEN_MSG.scopeUnknown }),
  expiresAt: z.iso.datetime({ offset: true, error: 'expiresAt must be an ISO 8601 date and time' }).nullable().optional(),
});
const tokenParams = z.strictObject({ id: uuid });

const tokenView = answers<AccessTokenView>()(
  z
    .object({
      id: z.string(),
      name: z.string(),
      prefix: z.string().meta({ description: 'The first characters of the token (`rs_pat_` and five more)' }),
      scopes: z.array(z.enum(TOKEN_SCOPES)),
      createdAt: timestamp,
      expiresAt: timestamp.nullable(),
      lastUsedAt: timestamp.nullable(),
      lastUsedIp: z.string().nullable(),
      expired: z.boolean(),
    })
    .meta({ id: 'AccessToken' }),
);

/**
 * /api/account/tokens: the signed-in user's personal access tokens (services/accounts/accessTokens.ts). Session only:
 * a token never lists, creates or revokes tokens (api/tokenScopes.ts refuses it).
 */
export function accessTokensRouter(deps: AppDeps): Router {
  const router = new Router();

  describeRoute(router, {
    method: 'get',
    path: '/api/account/tokens',
    tag: 'Account',
    summary: "The user's access tokens that are not revoked (expired ones marked), newest first; never the tokens themselves",
    access: 'session',
    workspace: 'self',
    responses: { 200: z.object({ success: z.literal(true), tokens: z.array(tokenView) }) },
  });
  router.get('/api/account/tokens', requireAuth(deps), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, tokens: await listAccessTokens(deps.knex, currentUser(ctx).id) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/account/tokens',
    tag: 'Account',
    summary: 'Create an access token: the answer is the only time the token is shown',
    description:
      `Scopes among ${TOKEN_SCOPES.map((s) => `\`${s}\``).join(', ')}; an optional expiry within a year. ` +
      `At most ${ACCESS_TOKENS_PER_USER} active tokens per user (409 ACCESS_TOKEN_LIMIT). ` +
      'Use it as `Authorization: Bearer <token>`; a token acts as its user in their workspaces, limited by its scopes, ' +
      'and never manages members, billing, webhooks or tokens.',
    access: 'session',
    workspace: 'self',
    body: createBody,
    responses: {
      201: z.object({ success: z.literal(true), token: z.string().meta({ description: '`rs_pat_` and 43 characters; shown once' }), accessToken: tokenView }),
      409: { description: `The user already has ${ACCESS_TOKENS_PER_USER} active tokens`, schema: errorBody },
    },
  });
  router.post('/api/account/tokens', requireAuth(deps), async (ctx) => {
    const body = parseBody(ctx, createBody);
    const user = currentUser(ctx);
    const created = await createAccessToken(deps.knex, user.id, {
      name: body.name,
      scopes: body.scopes,
      expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
    });
    ctx.state.log?.info({ audit: 'access_token_created', userId: user.id, tokenId: created.accessToken.id, scopes: created.accessToken.scopes }, 'access token created');
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = { success: true, ...created };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/account/tokens/:id',
    tag: 'Account',
    summary: 'Revoke one of the user\'s access tokens: refused (401) from the next request on',
    access: 'session',
    workspace: 'self',
    params: tokenParams,
    responses: { 200: okBody },
  });
  router.delete('/api/account/tokens/:id', requireAuth(deps), async (ctx) => {
    const { id } = parse(tokenParams, ctx.params);
    const user = currentUser(ctx);
    await revokeAccessToken(deps.knex, user.id, id);
    ctx.state.log?.info({ audit: 'access_token_revoked', userId: user.id, tokenId: id }, 'access token revoked');
    ctx.body = { success: true };
  });

  return router;
}
