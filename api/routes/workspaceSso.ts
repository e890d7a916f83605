import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { MAX_SSO_DOMAINS, WORKSPACE_SSO_MSG, type WorkspaceSsoSettings } from '../../domain/singleSignOn';
import { WorkspaceNotFoundError } from '../../services/workspaces/access';
import { deleteWorkspaceSso, getWorkspaceSso, saveWorkspaceSso } from '../../services/workspaces/workspaceSingleSignOn';
import type { AppDeps } from '../deps';
import { currentSessionId, requireAuth } from '../middleware/auth';
import { answers, describeRoute, errorBody, okBody } from '../openapi/describe';
import { parse, parseBody, requiredString, singleLine } from '../validation';
import { workspaceGrant } from '../workspace';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = 'Workspaces';
const workspaceParams = z.object({ id: z.string() });

const ssoBody = z.object({
  issuerUrl: singleLine(requiredString('Issuer URL').trim(), 'Issuer URL')
    .min(1, { error: WORKSPACE_SSO_MSG.issuerInvalid })
    .max(2048, { error: WORKSPACE_SSO_MSG.issuerInvalid })
    .meta({ description: "The provider's issuer; its /.well-known/openid-configuration is read when saved" }),
  clientId: singleLine(requiredString('Client ID').trim(), 'Client ID').min(1, { error: WORKSPACE_SSO_MSG.clientIdRequired }).max(512),
  clientSecret: z
    .string({ error: 'Client secret must be a string' })
    .min(1, { error: WORKSPACE_SSO_MSG.clientSecretRequired })
    .max(1024)
    .optional()
    .meta({ description: 'Required the first time; leave it out to keep the one stored. Never answered.' }),
  displayName: singleLine(requiredString('Name').trim(), 'Name').min(1, { error: WORKSPACE_SSO_MSG.nameRequired }).max(60),
  domains: z
    .array(z.string({ error: 'Each domain must be a string' }).max(253), { error: WORKSPACE_SSO_MSG.domainsRequired })
    .min(1, { error: WORKSPACE_SSO_MSG.domainsRequired })
    .max(MAX_SSO_DOMAINS, { error: WORKSPACE_SSO_MSG.tooManyDomains }),
  ssoRequired: z.boolean({ error: 'ssoRequired must be true or false' }),
});

const settingsView = answers<WorkspaceSsoSettings>()(
  z
    .object({
      issuerUrl: z.string(),
      clientId: z.string(),
      clientSecretSet: z.literal(true),
      displayName: z.string(),
      domains: z.array(z.string()),
      ssoRequired: z.boolean(),
      redirectUri: z.string().meta({ description: 'The redirect URI to register at the provider' }),
      updatedAt: z.string(),
    })
    .meta({ id: 'WorkspaceSso' }),
);
const notFound = { description: 'Not a member of the workspace (or no such workspace)', schema: errorBody };

function workspaceIdOf(ctx: Context): string {
  const { id } = parse(workspaceParams, ctx.params);
  if (!UUID.test(id)) throw new WorkspaceNotFoundError();
  return id.toLowerCase();
}

async function adminGrant(ctx: Context, deps: AppDeps) {
  ctx.query = { ...ctx.query, workspaceId: workspaceIdOf(ctx) };
  return workspaceGrant(ctx, deps, 'manageMembers');
}

/**
 * /api/workspaces/:id/sso: the workspace's own OpenID provider (services/workspaces/workspaceSingleSignOn.ts), set by
 * its admins and owners with a session (never a personal access token: managing members).
 */
export function workspaceSsoRouter(deps: AppDeps): Router {
  const router = new Router();
  const auth = requireAuth(deps);
  const sso = { knex: deps.knex, config: deps.config, logger: deps.logger };

  describeRoute(router, {
    method: 'get',
    path: '/api/workspaces/:id/sso',
    tag: TAG,
    summary: "The workspace's single sign-on (admins and owners): null when none is set up; the client secret is never answered",
    access: 'session',
    workspace: 'manageMembers',
    params: workspaceParams,
    responses: { 200: z.object({ success: z.literal(true), sso: settingsView.nullable() }), 404: notFound },
  });
  router.get('/api/workspaces/:id/sso', auth, async (ctx) => {
    const grant = await adminGrant(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, sso: await getWorkspaceSso(deps.knex, deps.config, grant.workspaceId) };
  });

  describeRoute(router, {
    method: 'put',
    path: '/api/workspaces/:id/sso',
    tag: TAG,
    summary: 'Set up or change the workspace\'s single sign-on with OpenID Connect (admins and owners)',
    description:
      "The issuer must be an https:// address of a public host that answers its discovery document (400 SSO_ISSUER_INVALID, SSO_ISSUER_UNREACHABLE; nothing is stored). Each domain is claimed by one workspace only (409 SSO_DOMAIN_TAKEN), never a public mail service (400 SSO_DOMAIN_PUBLIC), and only by someone with a verified address at it (403 SSO_DOMAIN_NOT_YOURS). With `ssoRequired`, the domains' addresses cannot sign in with a password (403 SSO_REQUIRED) and their sessions not opened through single sign-on end (`endedSessions`); the workspace's owners are exempt. An admin whose address is at one of the domains turns the requirement on only from a session opened through single sign-on (409 SSO_SIGN_IN_FIRST).",
    access: 'session',
    workspace: 'manageMembers',
    params: workspaceParams,
    body: ssoBody,
    responses: {
      200: z.object({ success: z.literal(true), sso: settingsView, endedSessions: z.number().int() }),
      400: { description: 'Invalid settings, an issuer that is not a reachable OpenID provider, a public or malformed domain, or a personal workspace', schema: errorBody },
      403: { description: 'A domain the caller has no verified address at (SSO_DOMAIN_NOT_YOURS), or not an admin', schema: errorBody },
      404: notFound,
      409: { description: 'A domain another workspace claimed (SSO_DOMAIN_TAKEN), or an admin at one of the domains requiring it from a session not opened through single sign-on (SSO_SIGN_IN_FIRST)', schema: errorBody },
    },
  });
  router.put('/api/workspaces/:id/sso', auth, async (ctx) => {
    const settings = parseBody(ctx, ssoBody);
    const grant = await adminGrant(ctx, deps);
    const saved = await saveWorkspaceSso({ ...sso, logger: ctx.state.log ?? deps.logger }, { workspaceId: grant.workspaceId, userId: grant.userId, sessionId: currentSessionId(ctx), settings });
    ctx.body = { success: true, sso: saved.settings, endedSessions: saved.endedSessions };
  });

  describeRoute(router, {
    method: 'delete',
    path: '/api/workspaces/:id/sso',
    tag: TAG,
    summary: "Remove the workspace's single sign-on (admins and owners): its domains are free and passwords work for them again",
    access: 'session',
    workspace: 'manageMembers',
    params: workspaceParams,
    responses: { 200: okBody, 404: { description: 'Not a member, or no single sign-on set up (WORKSPACE_SSO_NOT_SET_UP)', schema: errorBody } },
  });
  router.delete('/api/workspaces/:id/sso', auth, async (ctx) => {
    const grant = await adminGrant(ctx, deps);
    await deleteWorkspaceSso(deps.knex, grant.workspaceId);
    ctx.body = { success: true };
  });

  return router;
}
