import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { attachmentDisposition, downloadsAsAttachment } from './contentTypes';
import { BUCKETS, isValidObjectPath, type Bucket } from './objectStorage';
import { expiryStep, parseFileUrl, RECENT_LINKS_MAX, type FileLinks, type FileRef } from './signedUrls';

/** S3's longest presigned lifetime (7 days). */
export const MAX_PRESIGNED_SECONDS = 604_800;

export interface S3PresignerOptions {
  /** Where browsers reach the object storage, e.g. `http://localhost:8333`; unset: AWS S3 in `region`. */
  endpoint?: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

export interface PresignGet {
  bucket: string;
  key: string;
  /** When the signature is made (X-Amz-Date); the link is valid from then for `expiresInSeconds`. */
  signingDate: Date;
  /** 1 to 604800 (S3's limit: 7 days). */
  expiresInSeconds: number;
  /** Sent back by the storage as Content-Disposition (`response-content-disposition`). */
  responseContentDisposition?: string;
}

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ escaped. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/**
 * Presigned GET links to objects (AWS Signature Version 4, query-string form, as S3 documents it), made synchronously
 * with static credentials. @aws-sdk/s3-request-presigner makes the same links but only asynchronously; the app hands
 * out links from synchronous code (every listing row carries one), so this signs them in place. The contract tests
 * compare its links with getSignedUrl's (for a client set up like S3ObjectStorage's, which asks for no checksum
 * mode), byte for byte, and have the S3 server accept and refuse them.
 */
export class S3Presigner {
  private readonly endpoint: URL | null;
  private readonly signingKeys = new Map<string, Buffer>();

  constructor(private readonly options: S3PresignerOptions) {
    this.endpoint = options.endpoint ? new URL(options.endpoint) : null;
  }

  private signingKey(day: string): Buffer {
    let key = this.signingKeys.get(day);
    if (!key) {
      key = hmac(hmac(hmac(hmac(`AWS4${this.options.secretAccessKey}`, day), this.options.region), 's3'), 'aws4_request');
      if (this.signingKeys.size > 4) this.signingKeys.clear();
      this.signingKeys.set(day, key);
    }
    return key;
  }

  /** Origin and path of the object: path style (`host/bucket/key`) for custom endpoints that ask for it or are IP addresses, virtual-hosted otherwise. */
  private location(bucket: string, key: string): { origin: string; host: string; path: string } {
    const keyPath = key.split('/').map(encode).join('/');
    const base = this.endpoint ?? new URL(`https://s3.${this.options.region}.amazonaws.com`);
    const basePath = base.pathname.replace(/\/+$/, '');
    const hostname = base.hostname.replace(/^\[|\]$/g, '');
    if (this.options.forcePathStyle || isIP(hostname) !== 0 || bucket.includes('.')) {
      return { origin: base.origin, host: base.host, path: `${basePath}/${encode(bucket)}/${keyPath}` };
    }
    const host = `${bucket}.${base.host}`;
    return { origin: `${base.protocol}//${host}`, host, path: `${basePath}/${keyPath}` };
  }

  /** Bucket and key of a URL to this endpoint, in the style `location` makes (path style or virtual-hosted); else null. */
  objectOf(url: string): { bucket: string; key: string } | null {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return null;
    }
    const base = this.endpoint ?? new URL(`https://s3.${this.options.region}.amazonaws.com`);
    const basePath = base.pathname.replace(/\/+$/, '');
    if (parsed.protocol !== base.protocol || !parsed.pathname.startsWith(`${basePath}/`)) return null;
    let segments: string[];
    try {
      segments = parsed.pathname.slice(basePath.length + 1).split('/').map(decodeURIComponent);
    } catch {
      return null;
    }
    if (parsed.host === base.host) {
      const [bucket, ...key] = segments;
      return bucket && key.length > 0 ? { bucket, key: key.join('/') } : null;
    }
    const suffix = `.${base.host}`;
    if (!parsed.host.endsWith(suffix)) return null;
    return { bucket: parsed.host.slice(0, -suffix.length), key: segments.join('/') };
  }

  /**
   * The request a link made by presignGet was signed for, if it was (same credentials, endpoint and parameters,
   * signature equal); null for anything else. Expiry is the caller's to check.
   */
  signedRequestOf(url: string): PresignGet | null {
    const object = this.objectOf(url);
    if (!object) return null;
    const query = new URL(url).searchParams;
    const stamp = query.get('X-Amz-Date') ?? '';
    const expires = Number(query.get('X-Amz-Expires'));
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(stamp);
    if (!m || !Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGNED_SECONDS) return null;
    const request: PresignGet = {
      bucket: object.bucket,
      key: object.key,
      signingDate: new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])),
      expiresInSeconds: expires,
      responseContentDisposition: query.get('response-content-disposition') ?? undefined,
    };
    const expected = Buffer.from(new URL(this.presignGet(request)).searchParams.get('X-Amz-Signature') ?? '');
    const given = Buffer.from(query.get('X-Amz-Signature') ?? '');
    return expected.length === given.length && timingSafeEqual(expected, given) ? request : null;
  }

  presignGet(request: PresignGet): string {
    const { origin, host, path } = this.location(request.bucket, request.key);
    const stamp = amzDate(request.signingDate);
    const day = stamp.slice(0, 8);
    const scope = `${day}/${this.options.region}/s3/aws4_request`;
    const params: Array<[string, string]> = [
      ['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'],
      ['X-Amz-Content-Sha256', 'UNSIGNED-PAYLOAD'],
      ['X-Amz-Credential', `${this.options.accessKeyId}/${scope}`],
      ['X-Amz-Date', stamp],
      ['X-Amz-Expires', String(request.expiresInSeconds)],
      ['X-Amz-SignedHeaders', 'host'],
      ['x-id', 'GetObject'],
    ];
    if (request.responseContentDisposition) params.push(['response-content-disposition', request.responseContentDisposition]);
    const queryOf = (pairs: Array<[string, string]>): string =>
      pairs
        .map(([k, v]) => [encode(k), encode(v)])
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
    const query = queryOf(params);
    const canonicalRequest = ['GET', path, query, `host:${host}`, '', 'host', 'UNSIGNED-PAYLOAD'].join('\n');
    const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, createHash('sha256').update(canonicalRequest, 'utf8').digest('hex')].join('\n');
    const signature = createHmac('sha256', this.signingKey(day)).update(stringToSign, 'utf8').digest('hex');
    return `${origin}${path}?${queryOf([...params, ['X-Amz-Signature', signature]])}`;
  }
}

export interface PresignedLinksOptions {
  presigner: S3Presigner;
  /** The S3 bucket an app bucket lives in (the configured prefix + its name). */
  bucketName: (bucket: Bucket) => string;
  ttlSeconds: number;
  expiryStepSeconds?: number;
  now?: () => number;
}

/**
 * File links straight to the object storage: presigned GETs with the lifetime of the API's signed links
 * (SIGNED_URL_TTL_SECONDS), signed at the start of the current step so one file's link stays the same for a while
 * and browsers can cache it. A zip downloads under its own name (response-content-disposition).
 */
export class PresignedFileLinks implements FileLinks {
  private readonly step: number;
  private readonly now: () => number;
  private readonly recent = new Map<string, { expires: number; url: string }>();

  constructor(private readonly options: PresignedLinksOptions) {
    this.step = expiryStep(options.ttlSeconds, options.expiryStepSeconds);
    this.now = options.now ?? Date.now;
  }

  parse(url: string): FileRef | null {
    const stable = parseFileUrl(url);
    if (stable) return stable;
    const object = this.options.presigner.objectOf(url);
    if (!object) return null;
    const bucket = BUCKETS.find((b) => this.options.bucketName(b) === object.bucket);
    return bucket && isValidObjectPath(object.key) ? { bucket, path: object.key } : null;
  }

  downloadLink(url: string, fileName: string): string | null {
    const request = this.options.presigner.signedRequestOf(url);
    const ref = request ? this.parse(url) : null;
    if (!request || !ref) return null;
    const remaining = Math.floor((request.signingDate.getTime() + request.expiresInSeconds * 1000 - this.now()) / 1000);
    if (remaining < 1) return null;
    return this.options.presigner.presignGet({
      bucket: request.bucket,
      key: request.key,
      signingDate: new Date(Math.floor(this.now() / 1000) * 1000),
      expiresInSeconds: remaining,
      responseContentDisposition: attachmentDisposition(fileName),
    });
  }

  sign(bucket: Bucket, path: string, ttlSeconds = this.options.ttlSeconds): string {
    const nowSeconds = Math.floor(this.now() / 1000);
    const signedAt = Math.floor(nowSeconds / this.step) * this.step;
    const expires = Math.ceil((nowSeconds + ttlSeconds) / this.step) * this.step;
    const key = `${bucket}/${path}/${ttlSeconds}`;
    const known = this.recent.get(key);
    if (known && known.expires === expires) return known.url;
    const url = this.options.presigner.presignGet({
      bucket: this.options.bucketName(bucket),
      key: path,
      signingDate: new Date(signedAt * 1000),
      expiresInSeconds: Math.min(MAX_PRESIGNED_SECONDS, expires - signedAt),
      responseContentDisposition: downloadsAsAttachment(path) ? attachmentDisposition(path.slice(path.lastIndexOf('/') + 1)) : undefined,
    });
    if (this.recent.size >= RECENT_LINKS_MAX) this.recent.clear();
    this.recent.set(key, { expires, url });
    return url;
  }
}
