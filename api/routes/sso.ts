import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { sendVerificationAtSignIn } from '../../services/accounts/accountSecurity';
import { finishSsoSignIn, ssoProviders, startSsoSignIn } from '../../services/accounts/singleSignOn';
import { DomainError } from '../../domain/errors';
import { SSO_ATTEMPT_TTL_MS } from '../../domain/singleSignOn';
import type { AppDeps } from '../deps';
import { sessionCookiePolicy, setSessionCookie } from '../middleware/auth';
import { actionLimited, answers, describeRoute, errorBody } from '../openapi/describe';
import { ActionLimiter } from '../../services/platform/actionLimiter';
import { WORKSPACE_SSO_MSG, type SsoProviderSummary } from '../../domain/singleSignOn';
import { lookupSsoForEmail } from '../../services/workspaces/workspaceSingleSignOn';
import { parseBody, parseQuery, RequestError, requiredString, singleLine } from '../validation';

/** The state of a "Sign in with ..." in progress: only sent back to the callback, gone after it. */
const STATE_COOKIE = 'rs_sso_state';
const STATE_COOKIE_PATH = '/api/auth/sso';

const providersAnswer = z.object({
  success: z.literal(true),
  providers: z.array(answers<SsoProviderSummary>()(z.object({ id: z.string(), name: z.string() }).meta({ id: 'SsoProvider' }))),
});

const emailField = singleLine(requiredString('E-mail').trim(), 'E-mail')
  .min(1, { error: WORKSPACE_SSO_MSG.emailInvalid })
  .max(254)
  .pipe(z.email({ error: WORKSPACE_SSO_MSG.emailInvalid }));
const lookupBody = z.object({ email: emailField });
const startQuery = z.object({ email: emailField.optional().meta({ description: "A work address: its domain's workspace provider is used instead of the installation's" }) });

const callbackQuery = z.object({
  state: z.string().max(200).optional(),
  code: z.string().max(2048).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2048).optional(),
});

const htmlOrJson = (description: string) => ({ description, schema: errorBody, contentType: ['application/json', 'text/html'] });

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** A browser that lands on the callback gets a page that says what went wrong; an API client gets the JSON error. */
function answerRefusal(ctx: Context, err: DomainError | RequestError): void {
  ctx.status = err.status;
  if (ctx.accepts('json', 'html') === 'html') {
    ctx.type = 'html';
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in did not complete</title></head><body><main><h1>Sign-in did not complete</h1><p role="alert">${escapeHtml(err.message)}</p><p><a href="/?auth=signin">Back to sign-in</a></p></main></body></html>`;
    return;
  }
  ctx.body = { success: false, error: err.message, ...(err.code ? { code: err.code } : {}) };
}

export function ssoRouter(deps: AppDeps): Router {
  const router = new Router();
  const sso = { knex: deps.knex, config: deps.config, logger: deps.logger };
  const security = { knex: deps.knex, config: deps.config, logger: deps.logger };
  const actionLimiter = new ActionLimiter(deps.knex, deps.actionLimits);

  function stateCookie(ctx: Context, value: string, maxAge: number): void {
    const { secure } = sessionCookiePolicy(deps.config);
    if (secure) ctx.cookies.secure = true;
    // Lax: sent on the provider's top-level redirect back to the callback, never on another site's sub-request
    ctx.cookies.set(STATE_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure, path: STATE_COOKIE_PATH, maxAge, overwrite: true });
  }

  describeRoute(router, {
    method: 'get',
    path: '/api/auth/sso/providers',
    tag: 'Auth',
    summary: 'The identity providers the sign-in page offers ("Sign in with <name>"): none when single sign-on is not set up',
    access: 'public',
    responses: { 200: providersAnswer },
    noDatabase: true,
  });
  router.get('/api/auth/sso/providers', (ctx) => {
    ctx.body = { success: true, providers: ssoProviders(deps.config) };
  });

  describeRoute(router, {
    method: 'post',
    path: '/api/auth/sso/lookup',
    tag: 'Auth',
    summary: "The single sign-on of an e-mail address's domain: the workspace provider's button, and whether a password is refused",
    description: 'Says nothing about any account: the answer is the same for every address of a domain. Counts against the single sign-on limit (30 per 10 minutes per client address).',
    access: 'public',
    body: lookupBody,
    responses: { 200: z.object({ success: z.literal(true), provider: z.object({ id: z.string(), name: z.string() }).nullable(), ssoRequired: z.boolean() }), 429: actionLimited },
  });
  router.post('/api/auth/sso/lookup', async (ctx) => {
    const { email } = parseBody(ctx, lookupBody);
    await actionLimiter.take('ssoSignIn', { address: ctx.ip || 'unknown' });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...(await lookupSsoForEmail(deps.knex, email)) };
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/auth/sso/start',
    tag: 'Auth',
    summary: "Begin single sign-on: redirects to the provider (authorization code flow with PKCE S256, state and nonce)",
    description: `Limited to 30 starts per 10 minutes per client address. Sets a short-lived (${SSO_ATTEMPT_TTL_MS / 60_000} min) HttpOnly SameSite=Lax cookie with the state; the PKCE verifier and nonce stay on the server. With \`email\`, the provider is the one of the workspace that claimed the address's domain.`,
    access: 'public',
    query: startQuery,
    responses: {
      302: { description: "To the provider's authorization endpoint" },
      400: htmlOrJson('An e-mail address that is not one'),
      404: htmlOrJson("Single sign-on is not set up here (SSO_NOT_CONFIGURED), or none for the e-mail address's domain (SSO_NO_PROVIDER_FOR_EMAIL)"),
      429: actionLimited,
      503: { description: 'The provider cannot be reached (SSO_PROVIDER_UNREACHABLE)', schema: errorBody },
    },
  });
  router.get('/api/auth/sso/start', async (ctx) => {
    let email: string | undefined;
    try {
      ({ email } = parseQuery(ctx, startQuery));
    } catch (err) {
      if (err instanceof RequestError) return answerRefusal(ctx, err);
      throw err;
    }
    if (deps.config.sso || email !== undefined) await actionLimiter.take('ssoSignIn', { address: ctx.ip || 'unknown' });
    let started: { authorizationUrl: string; state: string };
    try {
      started = await startSsoSignIn(sso, { email });
    } catch (err) {
      // a browser sent here from the sign-in page gets a page that says why
      if (err instanceof DomainError && err.status === 404 && email !== undefined) return answerRefusal(ctx, err);
      throw err;
    }
    const { authorizationUrl, state } = started;
    stateCookie(ctx, state, SSO_ATTEMPT_TTL_MS);
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(authorizationUrl);
  });

  describeRoute(router, {
    method: 'get',
    path: '/api/auth/sso/callback',
    tag: 'Auth',
    summary: "The provider's redirect back: checks the state, exchanges the code, validates the ID token and nonce, then signs in",
    description:
      'The first sign-in of a provider\'s person joins an existing account only when the provider says `email_verified: true` and the account\'s address is verified too; a new address gets a new account. Answers an HTML page to a browser and JSON otherwise when it refuses.',
    access: 'public',
    query: callbackQuery,
    responses: {
      302: { description: 'Signed in: sets the session cookie and redirects to the app' },
      400: htmlOrJson('A state that does not match this browser or has expired (SSO_STATE_INVALID), a callback already used (SSO_ALREADY_USED), an error from the provider (SSO_PROVIDER_ERROR), a code it rejects (SSO_CODE_REJECTED), an ID token that fails validation or a nonce that does not match (SSO_ID_TOKEN_INVALID), or no e-mail (SSO_NO_EMAIL)'),
      403: htmlOrJson("The account is being deleted (SSO_ACCOUNT_CLOSED), or a workspace's provider answered an address outside the workspace's domains (SSO_EMAIL_OUTSIDE_DOMAINS)"),
      404: htmlOrJson('Single sign-on is not set up here (SSO_NOT_CONFIGURED)'),
      409: htmlOrJson('An account with this e-mail exists and the address is not verified on both sides (SSO_LINK_REFUSED)'),
      503: htmlOrJson('The provider cannot be reached (SSO_PROVIDER_UNREACHABLE)'),
    },
  });
  router.get('/api/auth/sso/callback', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const cookieState = ctx.cookies.get(STATE_COOKIE);
    // whatever happens next, this state is spent
    if (cookieState !== undefined) stateCookie(ctx, '', 0);
    try {
      parseQuery(ctx, callbackQuery);
      const result = await finishSsoSignIn(sso, {
        query: new URLSearchParams(ctx.querystring),
        cookieState,
        device: { userAgent: ctx.get('user-agent') || null, ipAddress: ctx.ip || null },
      });
      if (!result.user.emailVerified) await sendVerificationAtSignIn(security, result.user.id);
      setSessionCookie(ctx, result.session.token, result.session.expiresAt, deps.config);
      ctx.redirect('/');
    } catch (err) {
      if ((err instanceof DomainError || err instanceof RequestError) && err.status < 500) return answerRefusal(ctx, err);
      throw err;
    }
  });

  return router;
}
