import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { finished, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { contentTypeOf, OBJECT_CACHE_SECONDS } from './contentTypes';
import {
  assertObjectPath,
  BUCKETS,
  ObjectExistsError,
  ObjectNotFoundError,
  type Bucket,
  type ByteRange,
  type ListedObject,
  type LocalFile,
  type ObjectStat,
  type ObjectStorage,
  type StoredObject,
} from './objectStorage';

/**
 * How put() keeps the no-overwrite rule:
 * - `if-none-match`: a conditional write (`If-None-Match: *` on PutObject and CompleteMultipartUpload); the storage
 *   refuses to replace an existing key, atomically (AWS S3 since 2024, SeaweedFS, MinIO, Ceph RGW);
 * - `head-check`: for servers that ignore the header: HeadObject first, then the write. Not atomic: two writers of
 *   the same new key at the same moment could both pass the check. The app never writes one key twice on purpose
 *   (new uploads get random keys, workflow outputs are keyed by job), so this only matters for retried activities,
 *   which store byte-identical content;
 * - `auto`: probes the bucket once (writes one object twice under a random key) and picks one of the two.
 */
export type ConditionalPutMode = 'auto' | 'if-none-match' | 'head-check';

export interface S3StorageOptions {
  /** S3 API address as the API and workers reach it; unset: AWS S3 in `region`. */
  endpoint?: string;
  region: string;
  /** Prepended to each app bucket name (renders, images ...): `rs-` gives `rs-renders`. */
  bucketPrefix: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  conditionalPut?: ConditionalPutMode;
  /** Origins whose pages may fetch() files (the library's downloads): set as the bucket's CORS rule when it is created. */
  corsOrigins?: string[];
  /** Bytes per multipart part (5 MiB at least) and parts in flight: memory use is about their product. */
  partSizeBytes?: number;
  partsInFlight?: number;
}

/** Incomplete multipart uploads (a process that died mid-put) are removed by the storage after this many days. */
const ABORT_INCOMPLETE_UPLOADS_DAYS = 1;
const DELETE_BATCH = 1000;
/** 5 MiB parts (S3's minimum), 4 in flight: about 30 MB of memory per put, whatever the file's size. */
const DEFAULT_PART_SIZE = 5 * 1024 * 1024;
const DEFAULT_PARTS_IN_FLIGHT = 4;

function statusOf(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata?.httpStatusCode : (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

function nameOf(err: unknown): string {
  return (err as { name?: string } | null)?.name ?? '';
}

function isNotFound(err: unknown): boolean {
  return statusOf(err) === 404 || ['NotFound', 'NoSuchKey', 'NoSuchBucket'].includes(nameOf(err));
}

/** 412: the key exists (If-None-Match: *); 409: a concurrent conditional write to the same key won. */
function isConditionFailure(err: unknown): boolean {
  return statusOf(err) === 412 || nameOf(err) === 'PreconditionFailed' || nameOf(err) === 'ConditionalRequestConflict';
}

/** Counts what passes through, so put() knows the stored size without another request. */
class ByteCounter extends Transform {
  bytes = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

/**
 * The app's buckets as S3 buckets (`<prefix><bucket>`) on any S3-compatible server, created when missing. Puts stream
 * through lib-storage's multipart Upload (a few parts in memory, whatever the file's size) and are conditional, so an
 * existing object is never replaced; an object appears only once its upload completed, so a failed stream leaves nothing.
 */
export class S3ObjectStorage implements ObjectStorage {
  readonly client: S3Client;
  private readonly ready = new Map<Bucket, Promise<void>>();
  private modePromise: Promise<'if-none-match' | 'head-check'> | null = null;

  constructor(private readonly options: S3StorageOptions) {
    this.client = new S3Client({
      endpoint: options.endpoint || undefined,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      // the bodies are checked by the S3 server with Content-MD5/ETags per part; a CRC of every part costs CPU for nothing
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  bucketName(bucket: Bucket): string {
    return `${this.options.bucketPrefix}${bucket}`;
  }

  private key(objectPath: string): string {
    return assertObjectPath(objectPath);
  }

  /** Creates the bucket when missing (once per process), with a rule that clears abandoned multipart uploads. */
  ensureBucket(bucket: Bucket): Promise<void> {
    let pending = this.ready.get(bucket);
    if (!pending) {
      pending = this.createBucket(this.bucketName(bucket)).catch((err: unknown) => {
        this.ready.delete(bucket);
        throw err;
      });
      this.ready.set(bucket, pending);
    }
    return pending;
  }

  private async createBucket(name: string): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: name }));
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: name }));
    } catch (err) {
      // another process created it between the two calls
      if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(nameOf(err))) throw err;
    }
    await this.client
      .send(
        new PutBucketLifecycleConfigurationCommand({
          Bucket: name,
          LifecycleConfiguration: {
            Rules: [{ ID: 'abort-incomplete-uploads', Status: 'Enabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: ABORT_INCOMPLETE_UPLOADS_DAYS } }],
          },
        }),
      )
      // not every S3-compatible server has lifecycle rules; the uploads are then only left by a process killed mid-put
      .catch(() => undefined);
    if (this.options.corsOrigins?.length) {
      await this.client
        .send(
          new PutBucketCorsCommand({
            Bucket: name,
            CORSConfiguration: {
              CORSRules: [{ AllowedOrigins: this.options.corsOrigins, AllowedMethods: ['GET', 'HEAD'], AllowedHeaders: ['Range'], ExposeHeaders: ['Content-Length', 'Content-Range', 'Content-Disposition'], MaxAgeSeconds: 3600 }],
            },
          }),
        )
        // servers that allow every origin by default (SeaweedFS) may not take bucket rules
        .catch(() => undefined);
    }
  }

  /** Creates every app bucket now (start-up), instead of on first use. */
  async ensureBuckets(): Promise<void> {
    await Promise.all(BUCKETS.map((b) => this.ensureBucket(b)));
  }

  private conditionalMode(): Promise<'if-none-match' | 'head-check'> {
    const configured = this.options.conditionalPut ?? 'auto';
    if (configured !== 'auto') return Promise.resolve(configured);
    this.modePromise ??= this.probeConditionalPut().catch((err: unknown) => {
      this.modePromise = null;
      throw err;
    });
    return this.modePromise;
  }

  /** Writes one small object twice with If-None-Match: * and looks whether the second write was refused. */
  private async probeConditionalPut(): Promise<'if-none-match' | 'head-check'> {
    await this.ensureBucket('renders');
    const Bucket = this.bucketName('renders');
    const Key = `_probe/conditional-put-${randomUUID()}`;
    try {
      await this.client.send(new PutObjectCommand({ Bucket, Key, Body: 'first', IfNoneMatch: '*' }));
      try {
        await this.client.send(new PutObjectCommand({ Bucket, Key, Body: 'second', IfNoneMatch: '*' }));
        return 'head-check';
      } catch (err) {
        if (isConditionFailure(err)) return 'if-none-match';
        // 501 NotImplemented and the like: the header is not understood
        return 'head-check';
      }
    } finally {
      await this.client.send(new DeleteObjectCommand({ Bucket, Key })).catch(() => undefined);
    }
  }

  async put(bucket: Bucket, objectPath: string, body: Readable | Buffer): Promise<StoredObject> {
    const Key = this.key(objectPath);
    await this.ensureBucket(bucket);
    const mode = await this.conditionalMode();
    if (mode === 'head-check' && (await this.stat(bucket, objectPath))) {
      if (!Buffer.isBuffer(body)) body.resume();
      throw new ObjectExistsError(bucket, objectPath);
    }
    const counter = Buffer.isBuffer(body) ? null : new ByteCounter();
    if (counter && !Buffer.isBuffer(body)) {
      // an error, or a source closed before its end (a client that went away mid-upload): the counter fails too, so
      // lib-storage aborts the multipart upload instead of waiting for bytes that never come
      finished(body, { writable: false }, (err) => {
        if (err) counter.destroy(err);
      });
      body.pipe(counter);
    }
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucketName(bucket),
        Key,
        Body: counter ?? body,
        ContentType: contentTypeOf(objectPath),
        CacheControl: `private, max-age=${OBJECT_CACHE_SECONDS}`,
        ...(mode === 'if-none-match' ? { IfNoneMatch: '*' } : {}),
      },
      partSize: this.options.partSizeBytes ?? DEFAULT_PART_SIZE,
      queueSize: this.options.partsInFlight ?? DEFAULT_PARTS_IN_FLIGHT,
    });
    try {
      await upload.done();
    } catch (err) {
      // as a failed pipeline does on disk: the source is not left half-read and paused
      if (counter && !Buffer.isBuffer(body)) {
        body.unpipe(counter);
        counter.destroy();
        if (!isConditionFailure(err)) body.destroy();
      }
      if (isConditionFailure(err)) throw new ObjectExistsError(bucket, objectPath);
      throw err;
    }
    return { bucket, path: objectPath, size: counter ? counter.bytes : (body as Buffer).length };
  }

  async stat(bucket: Bucket, objectPath: string): Promise<ObjectStat | null> {
    const Key = this.key(objectPath);
    await this.ensureBucket(bucket);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucketName(bucket), Key }));
      return { size: head.ContentLength ?? 0, modifiedAt: head.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async read(bucket: Bucket, objectPath: string, range?: ByteRange): Promise<Readable> {
    const Key = this.key(objectPath);
    await this.ensureBucket(bucket);
    try {
      const got = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucketName(bucket), Key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      if (!(got.Body instanceof Readable)) throw new Error('The S3 client returned a body that is not a Node stream');
      return got.Body;
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFoundError(bucket, objectPath);
      throw err;
    }
  }

  /** A temporary copy under the OS temp folder for sharp or ffmpeg; `release` removes it. */
  async localFile(bucket: Bucket, objectPath: string): Promise<LocalFile> {
    const body = await this.read(bucket, objectPath);
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rs-object-'));
    const file = path.join(dir, path.posix.basename(objectPath));
    const release = () => fsp.rm(dir, { recursive: true, force: true });
    try {
      await pipeline(body, fs.createWriteStream(file, { flags: 'wx' }));
    } catch (err) {
      await release();
      throw err;
    }
    return { path: file, release };
  }

  async remove(bucket: Bucket, paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const keys = paths.map((p) => this.key(p));
    await this.ensureBucket(bucket);
    await this.deleteKeys(this.bucketName(bucket), keys);
  }

  private async deleteKeys(Bucket: string, keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const result = await this.client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      const failed = (result.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length) throw new Error(`Could not remove ${failed.length} object(s) from ${Bucket}: ${failed[0].Code ?? 'error'} ${failed[0].Key ?? ''}`);
    }
  }

  async removePrefix(bucket: Bucket, prefix: string): Promise<void> {
    const listed = await this.list(bucket, prefix);
    await this.deleteKeys(
      this.bucketName(bucket),
      listed.map((o) => o.path),
    );
  }

  async list(bucket: Bucket, prefix: string): Promise<ListedObject[]> {
    const folder = prefix === '' ? '' : `${this.key(prefix)}/`;
    await this.ensureBucket(bucket);
    const found: ListedObject[] = [];
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucketName(bucket), Prefix: folder })) {
      for (const object of page.Contents ?? []) if (object.Key) found.push({ path: object.Key, size: object.Size ?? 0, modifiedAt: object.LastModified ?? new Date(0) });
    }
    return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Every bucket exists (created now if missing) and one small object can be written and removed. */
  async checkWritable(): Promise<void> {
    await this.ensureBuckets();
    const Bucket = this.bucketName('renders');
    const Key = `_health/ready-${process.pid}-${randomUUID()}`;
    await this.client.send(new PutObjectCommand({ Bucket, Key, Body: 'ok' }));
    await this.client.send(new DeleteObjectCommand({ Bucket, Key }));
  }

  /** Ends the client's keep-alive connections. */
  close(): void {
    this.client.destroy();
  }
}
