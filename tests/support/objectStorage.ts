import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ListMultipartUploadsCommand, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { loadConfig, type S3Config } from '../../config/env';
import { BUCKETS, createStorage, isBucket, parseFileUrl, S3ObjectStorage, UrlSigner, type Bucket, type FileRef, type Storage } from '../../storage';

// plain JS modules shared with npm start
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services');

const ROOT = path.resolve(__dirname, '..', '..');

export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  stop: () => Promise<void>;
}

/** A SeaweedFS S3 server (scripts/lib/services.js) with its data under .data/test; stop() ends it and removes the data. */
export async function startS3Server(name: string): Promise<S3Server> {
  const dataDir = path.join(ROOT, '.data', 'test', `seaweedfs-${name}-${process.pid}-${randomBytes(3).toString('hex')}`);
  const server = await services.startSeaweedfs({ weed: tools.ensureSeaweedfs(), dataDir, logFile: `${dataDir}.log` });
  return {
    endpoint: server.endpoint,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
    region: server.region,
    stop: async () => {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(`${dataDir}.log`, { force: true });
    },
  };
}

/** The S3 server of this run (globalSetup started one for `--storage=s3`), or null. */
export function runS3Server(): Omit<S3Server, 'stop'> | null {
  const env = process.env;
  if (env.STORAGE_BACKEND !== 's3' || !env.S3_ENDPOINT || !env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY) return null;
  return { endpoint: env.S3_ENDPOINT, accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY, region: env.S3_REGION || 'us-east-1' };
}

/** Settings for the S3 backend on `server` with buckets of their own (a fresh prefix), so parallel test files never meet. */
export function s3ConfigFor(server: Omit<S3Server, 'stop'>, label = 't'): S3Config {
  return {
    endpoint: server.endpoint,
    publicUrl: server.endpoint,
    region: server.region,
    bucketPrefix: `rs-${label}-${randomBytes(4).toString('hex')}-`,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
    forcePathStyle: true,
    conditionalPut: 'auto',
  };
}

/** The storage this run's tests use (STORAGE_BACKEND, STORAGE_DIR and S3_* from globalSetup). */
export function runStorage(): Storage {
  return createStorage(loadConfig());
}

export function runBackend(): 'local' | 's3' {
  return loadConfig().storageBackend;
}

/** Bucket and path of a stored file from any of its links: the API's /api/files/... or a presigned object storage URL. */
/**
 * A link to a file through the API's own file route (/api/files), signed with the app's secret, whatever the storage
 * backend: the route that decides whether the file may be served (pay on approval) answers it. With object storage the
 * app hands out presigned links instead, which the object storage answers without asking the API, so a test of the
 * route's rule mints this kind; that the app never presigns an unapproved original is tested apart.
 */
export function apiFileLink(config: { signingSecret: string; signedUrlTtlSeconds: number }, bucket: Bucket, objectPath: string): string {
  return new UrlSigner({ secret: config.signingSecret, ttlSeconds: config.signedUrlTtlSeconds }).sign(bucket, objectPath);
}

export function fileRefOfLink(link: string): FileRef | null {
  const api = parseFileUrl(link);
  if (api) return api;
  const config = loadConfig();
  if (config.storageBackend !== 's3') return null;
  const url = new URL(link);
  const [first, ...rest] = url.pathname.replace(/^\//, '').split('/');
  const bucket = first?.startsWith(config.s3.bucketPrefix) ? first.slice(config.s3.bucketPrefix.length) : '';
  return isBucket(bucket) ? { bucket, path: rest.map(decodeURIComponent).join('/') } : null;
}

/** Whether the file a link points at is stored (asked of the storage, not of the link). */
export async function linkedFileExists(link: string): Promise<boolean> {
  const ref = fileRefOfLink(link);
  if (!ref) throw new Error(`not a link to a stored file: ${link}`);
  return (await runStorage().objects.stat(ref.bucket, ref.path)) !== null;
}

/** A link's end of validity (ms): `expires` of an API link, X-Amz-Date + X-Amz-Expires of a presigned one. */
export function linkExpiresAt(link: string): number {
  const url = new URL(link, 'http://local');
  if (url.searchParams.has('expires')) return Number(url.searchParams.get('expires')) * 1000;
  const date = url.searchParams.get('X-Amz-Date') ?? '';
  const signedAt = Date.parse(date.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  return signedAt + Number(url.searchParams.get('X-Amz-Expires')) * 1000;
}

/** The link with its signature changed, or its lifetime stretched by `seconds`: both must be refused. */
export function tamperedLinks(link: string, seconds = 86_400): { signature: URL; lifetime: URL } {
  const url = new URL(link, 'http://local');
  const [sigKey, expiryKey, scale] = url.searchParams.has('sig') ? ['sig', 'expires', 1] : ['X-Amz-Signature', 'X-Amz-Expires', 1];
  const signature = new URL(url);
  signature.searchParams.set(sigKey, `${url.searchParams.get(sigKey)?.slice(0, -2)}${url.searchParams.get(sigKey)?.endsWith('00') ? '11' : '00'}`);
  const lifetime = new URL(url);
  lifetime.searchParams.set(expiryKey, String(Number(url.searchParams.get(expiryKey)) + seconds * scale));
  return { signature, lifetime };
}

/** Every stored object as `<bucket>/<path>`, whatever the backend (local: the files under STORAGE_DIR's buckets). */
export async function allStoredPaths(): Promise<string[]> {
  const config = loadConfig();
  const objects = runStorage().objects;
  const found: string[] = [];
  if (objects instanceof S3ObjectStorage) {
    await objects.ensureBuckets();
    for (const bucket of BUCKETS) {
      for await (const page of paginateListObjectsV2({ client: objects.client }, { Bucket: objects.bucketName(bucket) })) {
        for (const o of page.Contents ?? []) if (o.Key && !o.Key.startsWith('_')) found.push(`${bucket}/${o.Key}`);
      }
    }
    return found.sort();
  }
  const root = path.resolve(config.storageDir);
  const walk = (dir: string): void => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else found.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  for (const bucket of BUCKETS) walk(path.join(root, bucket));
  return found.sort();
}

/** Writes begun but not finished: local files in STORAGE_DIR/.incoming, S3 multipart uploads not completed or aborted. */
export async function unfinishedWrites(): Promise<string[]> {
  const config = loadConfig();
  const objects = runStorage().objects;
  if (objects instanceof S3ObjectStorage) {
    const open: string[] = [];
    await objects.ensureBuckets();
    for (const bucket of BUCKETS) {
      const listed = await objects.client.send(new ListMultipartUploadsCommand({ Bucket: objects.bucketName(bucket) }));
      for (const u of listed.Uploads ?? []) open.push(`${bucket}/${u.Key}`);
    }
    return open;
  }
  const incoming = path.join(path.resolve(config.storageDir), '.incoming');
  return fs.existsSync(incoming) ? fs.readdirSync(incoming) : [];
}

/** Runs `fn` with a local path of a stored file (the file itself on disk, a temporary copy with object storage). */
export async function withStoredFile<T>(bucket: Bucket, objectPath: string, fn: (file: string) => Promise<T>): Promise<T> {
  const local = await runStorage().objects.localFile(bucket, objectPath);
  try {
    return await fn(local.path);
  } finally {
    await local.release();
  }
}

export async function storedObjectExists(bucket: Bucket, objectPath: string): Promise<boolean> {
  return (await runStorage().objects.stat(bucket, objectPath)) !== null;
}

/** The objects under `<bucket>/<prefix>/` in the run's storage. */
export async function storedUnder(bucket: Bucket, prefix: string): Promise<string[]> {
  return (await runStorage().objects.list(bucket, prefix)).map((o) => o.path);
}
