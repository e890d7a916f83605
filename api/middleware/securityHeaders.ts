import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

/**
 * Security headers on every response (helmet through koa-helmet). The CSP allows only what the built front end
 * uses: its own scripts and styles (no inline script), images from itself, data: (the favicon) and blob:
 * (previews of chosen files), media from itself and blob:, API calls to itself. The Stripe checkout is a
 * top-level navigation, which the CSP does not restrict. HSTS and upgrade-insecure-requests only when
 * PUBLIC_URL is https, so a plain-http local start keeps working. File responses (routes/files.ts) replace
 * the CSP with their own sandboxing one.
 */
export function securityHeaders(config: { publicUrl: string }): Middleware {
  const https = /^https:/i.test(config.publicUrl);
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'self'"],
        scriptSrc: ["'self'"],
        scriptSrcAttr: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:', 'blob:'],
        mediaSrc: ["'self'", 'blob:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        frameSrc: ["'none'"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        upgradeInsecureRequests: https ? [] : null,
      },
    },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    xFrameOptions: { action: 'deny' },
  });
}
