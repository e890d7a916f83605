import type { Context, Middleware } from 'koa';
import { RequestError } from '../validation';
import { bearerToken, hasSessionCookie } from './auth';

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

export const CSRF_MSG = 'Cross-site request refused' as const;

function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Whether a browser sent this request from the app's own pages: Origin first; without it (older browsers,
 * some same-origin requests) Sec-Fetch-Site; then Referer. A request with none of the three comes from a
 * non-browser client, which carries no ambient cookie from a victim's browser, and is allowed.
 */
function isSameOrigin(ctx: Context, allowed: ReadonlySet<string>): boolean {
  // Koa 3's ctx.origin is the Origin header: the request's own origin is built from its protocol and Host
  const own = new Set(allowed).add(`${ctx.protocol}://${ctx.host}`);
  const origin = ctx.get('origin');
  if (origin) return own.has(origin);
  const site = ctx.get('sec-fetch-site');
  if (site) return site === 'same-origin' || site === 'none';
  const referer = ctx.get('referer');
  if (referer) {
    const from = originOf(referer);
    return from !== null && own.has(from);
  }
  return true;
}

/**
 * CSRF defence (OWASP: verify the source origin): a state-changing request authenticated by the session cookie
 * must come from the app's own origin (PUBLIC_URL's, or the one the request was addressed to), else 403.
 * Bearer-token requests are exempt (no browser attaches the header on its own), and so is any request without
 * a session cookie (public webhooks, sign-in): there is no session to ride on.
 */
export function csrfGuard(config: { publicUrl: string }): Middleware {
  const publicOrigin = originOf(config.publicUrl);
  const allowed: ReadonlySet<string> = new Set(publicOrigin ? [publicOrigin] : []);
  return async function csrfGuardMiddleware(ctx, next) {
    if (SAFE_METHODS.has(ctx.method)) return next();
    if (bearerToken(ctx) !== null || !hasSessionCookie(ctx)) return next();
    if (!isSameOrigin(ctx, allowed)) throw new RequestError(403, CSRF_MSG, 'CSRF_REJECTED');
    return next();
  };
}
