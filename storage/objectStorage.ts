import type { Readable } from 'node:stream';

/** The buckets of DESIGN.md "Storage". */
export const BUCKETS = ['renders', 'images', 'clips', 'videos', 'drafts'] as const;
export type Bucket = (typeof BUCKETS)[number];

export function isBucket(value: string): value is Bucket {
  return (BUCKETS as readonly string[]).includes(value);
}

export interface StoredObject {
  bucket: Bucket;
  path: string;
  size: number;
}

export interface ObjectStat {
  size: number;
  modifiedAt: Date;
}

export interface ByteRange {
  /** first byte, inclusive */
  start: number;
  /** last byte, inclusive */
  end: number;
}

/** One object of a listing: its path in the bucket, its size and when it was written. */
export interface ListedObject {
  path: string;
  size: number;
  modifiedAt: Date;
}

/** A file readable by path for tools that need one (sharp, ffmpeg); `release` frees any temporary copy. */
export interface LocalFile {
  path: string;
  release: () => Promise<void>;
}

/**
 * Object storage with no policy: callers choose paths, decide what may be stored and who may read it.
 * Paths are relative, '/'-separated, each segment made of letters, digits, '.', '_' and '-'.
 */
export interface ObjectStorage {
  /** Streams `body` to bucket/path. Never overwrites: an existing object fails with ObjectExistsError. Nothing is left behind when `body` fails. */
  put(bucket: Bucket, path: string, body: Readable | Buffer): Promise<StoredObject>;
  /** Null when the object does not exist. */
  stat(bucket: Bucket, path: string): Promise<ObjectStat | null>;
  /** Fails with ObjectNotFoundError when the object does not exist. */
  read(bucket: Bucket, path: string, range?: ByteRange): Promise<Readable>;
  /** A path sharp or ffmpeg can open: the file itself on disk, a temporary copy (removed by `release`) otherwise. */
  localFile(bucket: Bucket, path: string): Promise<LocalFile>;
  /** Removes the objects; missing ones are ignored. */
  remove(bucket: Bucket, paths: readonly string[]): Promise<void>;
  /** Removes every object under `prefix/`. */
  removePrefix(bucket: Bucket, prefix: string): Promise<void>;
  /** Every object under `prefix/` (at any depth), sorted by path; '' lists the whole bucket. */
  list(bucket: Bucket, prefix: string): Promise<ListedObject[]>;
  /** Fails unless an object can be written and removed again now (readiness checks). */
  checkWritable(): Promise<void>;
}

export class ObjectExistsError extends Error {
  constructor(readonly bucket: Bucket, readonly path: string) {
    super(`Object already exists: ${bucket}/${path}`);
    this.name = 'ObjectExistsError';
  }
}

export class ObjectNotFoundError extends Error {
  constructor(readonly bucket: Bucket, readonly path: string) {
    super(`Object not found: ${bucket}/${path}`);
    this.name = 'ObjectNotFoundError';
  }
}

export class InvalidObjectPathError extends Error {
  constructor(readonly path: string) {
    super(`Invalid object path: ${JSON.stringify(path)}`);
    this.name = 'InvalidObjectPathError';
  }
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

export function isValidObjectPath(path: string): boolean {
  if (path.length === 0 || path.length > 1024) return false;
  return path.split('/').every((segment) => SEGMENT.test(segment) && segment !== '.' && segment !== '..' && !segment.includes('..'));
}

export function assertObjectPath(path: string): string {
  if (!isValidObjectPath(path)) throw new InvalidObjectPathError(path);
  return path;
}
