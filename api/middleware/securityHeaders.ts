import type { Middleware } from 'koa';
import helmet from 'koa-helmet';
import type { AppConfig } from '../../config/env';

/** Where browsers load stored files from when they live in object storage (presigned links), else nothing more. */
export function storageOrigins(config: Partial<Pick<AppConfig, 'storageBackend' | 's3'>>): string[] {
  if (config.storageBackend !== 's3' || !config.s3) return [];
  if (config.s3.publicUrl) return [new URL(config.s3.publicUrl).origin];
  return [`https://*.s3.${config.s3.region}.amazonaws.com`];
}

/**
 * Security headers on every response (helmet through koa-helmet). The CSP allows only what the built front end
 * uses: its own scripts and styles (no inline script), images from itself, data: (the favicon) and blob:
 * (previews of chosen files), media from itself and blob:, API calls to itself. The Stripe checkout is a
 * top-level navigation, which the CSP does not restrict. HSTS and upgrade-insecure-requests only when
 * PUBLIC_URL is https, so a plain-http local start keeps working. File responses (routes/files.ts) replace
 * the CSP with their own sandboxing one. With object storage, images, media and downloads also come from its origin.
 */
export function securityHeaders(config: { publicUrl: string } & Partial<Pick<AppConfig, 'storageBackend' | 's3'>>): Middleware {
  const https = /^https:/i.test(config.publicUrl);
  const storage = storageOrigins(config);
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'self'"],
        scriptSrc: ["'self'"],
        scriptSrcAttr: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:', 'blob:', ...storage],
        mediaSrc: ["'self'", 'blob:', ...storage],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'", ...storage],
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
