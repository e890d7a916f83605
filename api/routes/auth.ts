import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { getAccount, signIn, signUp, type SignedIn } from '../../services/accounts';
import { endSession } from '../../services/sessions';
import type { AppDeps } from '../deps';
import { clearSessionCookie, currentUser, requireAuth, sessionToken, setSessionCookie } from '../middleware/auth';
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter, signInRateLimit } from '../middleware/rateLimit';
import { parseBody, requiredString, singleLine } from '../validation';

const email = singleLine(requiredString('Email').trim(), 'Email').max(254).pipe(z.email({ error: 'Please enter a valid email address' }));

const signUpBody = z.strictObject({
  name: singleLine(z.string({ error: 'Name must be a string' }), 'Name').max(200).optional(),
  email,
  password: requiredString('Password').max(1024),
});

const signInBody = z.strictObject({
  email: singleLine(requiredString('Email').trim(), 'Email').min(1, { error: 'Email is required' }).max(254),
  password: requiredString('Password').min(1, { error: 'Password is required' }).max(1024),
});

const signOutBody = z.strictObject({});

export function authRouter(deps: AppDeps): Router {
  const router = new Router();
  const limiter = new SignInLimiter(deps.knex, deps.signInLimits ?? DEFAULT_SIGN_IN_LIMITS);
  const ttl = { sessionTtlDays: deps.config.sessionTtlDays };

  function answerSignedIn(ctx: Context, result: SignedIn, status: number): void {
    setSessionCookie(ctx, result.session.token, result.session.expiresAt, deps.config);
    ctx.status = status;
    ctx.body = { success: true, user: result.user, token: result.session.token, expiresAt: result.session.expiresAt };
  }

  router.post('/api/auth/signup', async (ctx) => {
    answerSignedIn(ctx, await signUp(deps.knex, parseBody(ctx, signUpBody), ttl), 201);
  });

  router.post('/api/auth/signin', signInRateLimit(limiter), async (ctx) => {
    answerSignedIn(ctx, await signIn(deps.knex, parseBody(ctx, signInBody), ttl), 200);
  });

  router.post('/api/auth/signout', async (ctx) => {
    parseBody(ctx, signOutBody);
    const token = sessionToken(ctx);
    if (token) await endSession(deps.knex, token);
    clearSessionCookie(ctx, deps.config);
    ctx.body = { success: true };
  });

  router.get('/api/auth/me', requireAuth(deps), async (ctx) => {
    ctx.body = { success: true, user: await getAccount(deps.knex, currentUser(ctx).id) };
  });

  return router;
}
