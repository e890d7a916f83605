import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { isBucket, isValidObjectPath, type Bucket } from './objectStorage';

export const FILES_ROUTE_PREFIX = '/api/files';

export interface FileRef {
  bucket: Bucket;
  path: string;
}

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/** Hands out expiring links to stored files: what browsers load previews and downloads from. */
export interface FileLinks {
  /** A link valid for at least `ttlSeconds` (the configured SIGNED_URL_TTL_SECONDS by default). */
  sign(bucket: Bucket, path: string, ttlSeconds?: number): string;
  /**
   * Bucket and path of a file from a URL a client sends back: the stable file URL (signed or not) or a link this
   * storage handed out (on S3 a presigned GET straight to the object storage). Null for anything else. It names a
   * file; it proves nothing: callers still check ownership and existence.
   */
  parse(url: string): FileRef | null;
  /**
   * For a link this storage handed out that is still valid: a link to the same file, for the rest of its lifetime,
   * that makes browsers save it as `fileName` (Content-Disposition: attachment). Null for any other URL. It needs no
   * CORS: the browser navigates to it instead of fetching it.
   */
  downloadLink(url: string, fileName: string): string | null;
}

/** The step expiries are rounded up to: one file's link stays the same for a while, so browsers can cache it. */
export function expiryStep(ttlSeconds: number, stepSeconds?: number): number {
  return Math.max(1, Math.floor(stepSeconds ?? Math.min(600, Math.max(1, Math.floor(ttlSeconds / 6)))));
}

export const RECENT_LINKS_MAX = 100_000;

export interface UrlSignerOptions {
  secret: string;
  ttlSeconds: number;
  /** Expiries are rounded up to this step so one file's URL stays the same for a while and browsers can cache it. */
  expiryStepSeconds?: number;
  now?: () => number;
}

/**
 * Expiring links to stored files: HMAC-SHA256 over bucket, path and expiry (unix seconds).
 * The files route accepts a link only while it is unexpired and its signature matches.
 */
export class UrlSigner implements FileLinks {
  private readonly step: number;
  private readonly now: () => number;
  private readonly key: KeyObject;
  /** Links already made for the current expiry step: a listing of 1000 items signs each link once per step, not per read. */
  private readonly recent = new Map<string, { expires: number; url: string }>();

  constructor(private readonly options: UrlSignerOptions) {
    if (!options.secret) throw new Error('A signing secret is required');
    this.key = createSecretKey(Buffer.from(options.secret, 'utf8'));
    this.step = expiryStep(options.ttlSeconds, options.expiryStepSeconds);
    this.now = options.now ?? Date.now;
  }

  private signature(bucket: string, path: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${bucket}\n${path}\n${expires}`).digest('base64url');
  }

  /** A relative URL (`/api/files/<bucket>/<path>?expires=&sig=`) valid for at least the configured TTL. */
  sign(bucket: Bucket, path: string, ttlSeconds = this.options.ttlSeconds): string {
    const nowSeconds = Math.floor(this.now() / 1000);
    const expires = Math.ceil((nowSeconds + ttlSeconds) / this.step) * this.step;
    const key = `${bucket}/${path}`;
    const known = this.recent.get(key);
    if (known && known.expires === expires) return known.url;
    const url = `${fileUrl(bucket, path)}?expires=${expires}&sig=${this.signature(bucket, path, expires)}`;
    if (this.recent.size >= RECENT_LINKS_MAX) this.recent.clear();
    this.recent.set(key, { expires, url });
    return url;
  }

  parse(url: string): FileRef | null {
    return parseFileUrl(url);
  }

  downloadLink(url: string, fileName: string): string | null {
    let parsed: URL;
    try {
      parsed = new URL(url, 'http://local');
    } catch {
      return null;
    }
    const ref = parseFileUrl(url);
    const expires = parsed.searchParams.get('expires') ?? undefined;
    const sig = parsed.searchParams.get('sig') ?? undefined;
    if (!ref || this.verify(ref.bucket, ref.path, expires, sig) !== 'valid') return null;
    // the name is not signed: whoever holds the link may save the file under any name (the files route sanitises it)
    return `${fileUrl(ref.bucket, ref.path)}?${new URLSearchParams({ expires: expires!, sig: sig!, download: fileName }).toString()}`;
  }

  verify(bucket: string, path: string, expires: string | undefined, sig: string | undefined): SignatureCheck {
    if (!expires || !sig || !/^\d{1,12}$/.test(expires)) return 'invalid';
    const expected = Buffer.from(this.signature(bucket, path, Number(expires)));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
    return Number(expires) * 1000 <= this.now() ? 'expired' : 'valid';
  }
}

/** The unsigned, stable address of a stored file (what rows keep in file_url); it answers 403 until signed. */
export function fileUrl(bucket: Bucket, path: string): string {
  return `${FILES_ROUTE_PREFIX}/${bucket}/${path}`;
}

/** Reads bucket and path back from a file URL (signed or not, relative or absolute); null for anything else. */
export function parseFileUrl(url: string): FileRef | null {
  let pathname: string;
  try {
    pathname = new URL(url, 'http://local').pathname;
  } catch {
    return null;
  }
  if (!pathname.startsWith(`${FILES_ROUTE_PREFIX}/`)) return null;
  const rest = pathname.slice(FILES_ROUTE_PREFIX.length + 1);
  const slash = rest.indexOf('/');
  if (slash < 0) return null;
  const bucket = rest.slice(0, slash);
  const path = rest.slice(slash + 1);
  return isBucket(bucket) && isValidObjectPath(path) ? { bucket, path } : null;
}
