import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertObjectPath,
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

/** How often a write makes its folders and links its file: a concurrent removal can prune a folder while it does. */
const LINK_ATTEMPTS = 5;

function isErrno(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === code;
}

/**
 * Buckets as folders under one root. Writes go to `<root>/.incoming` first and are hard-linked into place,
 * so a reader never sees a half-written file and an existing object is never replaced (link fails with EEXIST).
 */
export class LocalDiskStorage implements ObjectStorage {
  private readonly root: string;
  private readonly incoming: string;

  constructor(rootDir: string) {
    this.root = path.resolve(rootDir);
    this.incoming = path.join(this.root, '.incoming');
  }

  private filePath(bucket: Bucket, objectPath: string): string {
    const full = path.join(this.root, bucket, assertObjectPath(objectPath));
    // assertObjectPath rules out '..'; this keeps the guarantee if the rules ever loosen
    if (!full.startsWith(path.join(this.root, bucket) + path.sep)) throw new ObjectNotFoundError(bucket, objectPath);
    return full;
  }

  async put(bucket: Bucket, objectPath: string, body: Readable | Buffer): Promise<StoredObject> {
    const target = this.filePath(bucket, objectPath);
    await fsp.mkdir(this.incoming, { recursive: true });
    const temp = path.join(this.incoming, randomUUID());
    try {
      // a buffer in one write; a stream piped with 1 MB writes
      if (Buffer.isBuffer(body)) await fsp.writeFile(temp, body, { flag: 'wx' });
      else await pipeline(body, fs.createWriteStream(temp, { flags: 'wx', highWaterMark: 1024 * 1024 }));
      await this.linkInPlace(temp, target, bucket, objectPath);
      const { size } = await fsp.stat(target);
      return { bucket, path: objectPath, size };
    } finally {
      await fsp.rm(temp, { force: true });
    }
  }

  async stat(bucket: Bucket, objectPath: string): Promise<ObjectStat | null> {
    try {
      const s = await fsp.stat(this.filePath(bucket, objectPath));
      return s.isFile() ? { size: s.size, modifiedAt: s.mtime } : null;
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return null;
      throw err;
    }
  }

  async read(bucket: Bucket, objectPath: string, range?: ByteRange): Promise<Readable> {
    const file = this.filePath(bucket, objectPath);
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(file, 'r');
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR') || isErrno(err, 'EISDIR')) throw new ObjectNotFoundError(bucket, objectPath);
      throw err;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async localFile(bucket: Bucket, objectPath: string): Promise<LocalFile> {
    const file = this.filePath(bucket, objectPath);
    if (!(await this.stat(bucket, objectPath))) throw new ObjectNotFoundError(bucket, objectPath);
    return { path: file, release: async () => {} };
  }

  /**
   * Links the finished temp file to its place, making its folders. A concurrent remove() can prune a folder (it was
   * empty then) between the mkdir and the link, or between two levels of the recursive mkdir itself, which then fails
   * with ENOENT; either way the folders are made again.
   */
  private async linkInPlace(temp: string, target: string, bucket: Bucket, objectPath: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await fsp.mkdir(path.dirname(target), { recursive: true });
        await fsp.link(temp, target);
        return;
      } catch (err) {
        if (isErrno(err, 'EEXIST')) throw new ObjectExistsError(bucket, objectPath);
        if (isErrno(err, 'ENOENT') && attempt < LINK_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  async remove(bucket: Bucket, paths: readonly string[]): Promise<void> {
    const files = paths.map((p) => this.filePath(bucket, p));
    await Promise.all(files.map((file) => fsp.rm(file, { force: true })));
    await this.pruneEmptyFolders(bucket, files.map((file) => path.dirname(file)));
  }

  async removePrefix(bucket: Bucket, prefix: string): Promise<void> {
    const target = this.filePath(bucket, prefix);
    await fsp.rm(target, { recursive: true, force: true });
    await this.pruneEmptyFolders(bucket, [path.dirname(target)]);
  }

  /**
   * Removes the folders a removal left empty, up to the bucket's own: a bucket is a flat set of keys, as in S3, so
   * its folders exist only while they hold objects, and listing it never walks what was deleted. rmdir removes only
   * an empty folder, so a folder that another write has just filled stays.
   */
  private async pruneEmptyFolders(bucket: Bucket, folders: readonly string[]): Promise<void> {
    const bucketRoot = path.join(this.root, bucket);
    // deepest first, each once
    for (const folder of [...new Set(folders)].sort((a, b) => b.length - a.length)) {
      for (let dir = folder; dir.startsWith(bucketRoot + path.sep); dir = path.dirname(dir)) {
        try {
          await fsp.rmdir(dir);
        } catch (err) {
          // gone already (a sibling's removal took it): its parent may be empty now
          if (isErrno(err, 'ENOENT')) continue;
          // ENOTEMPTY, EEXIST: it still holds something, and so do its parents
          break;
        }
      }
    }
  }

  async list(bucket: Bucket, prefix: string): Promise<ListedObject[]> {
    const bucketRoot = path.join(this.root, bucket);
    const found: ListedObject[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries: fs.Dirent[];
      try {
        entries = await fsp.readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return;
        throw err;
      }
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.isFile()) {
          let s: fs.Stats;
          try {
            s = await fsp.stat(full);
          } catch (err) {
            // removed between the directory read and this look (a sweep or a delete running meanwhile): not listed,
            // as an object store's listing would not list it either
            if (isErrno(err, 'ENOENT')) continue;
            throw err;
          }
          found.push({ path: path.relative(bucketRoot, full).split(path.sep).join('/'), size: s.size, modifiedAt: s.mtime });
        }
      }
    };
    await walk(prefix === '' ? bucketRoot : this.filePath(bucket, prefix));
    return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** A small file written and removed again under the root: the disk is there, mounted and writable. */
  async checkWritable(): Promise<void> {
    const dir = path.join(this.root, '.health');
    await fsp.mkdir(dir, { recursive: true });
    const file = path.join(dir, `ready-${process.pid}-${randomUUID()}`);
    await fsp.writeFile(file, 'ok');
    await fsp.rm(file, { force: true });
  }
}
