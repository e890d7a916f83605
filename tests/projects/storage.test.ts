import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import {
  InvalidObjectPathError,
  LocalDiskStorage,
  ObjectExistsError,
  ObjectNotFoundError,
  UrlSigner,
  fileUrl,
  isValidObjectPath,
  parseFileUrl,
} from '../../storage';

let root: string;
let storage: LocalDiskStorage;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-storage-'));
  storage = new LocalDiskStorage(root);
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function failingStream(afterBytes: number): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(Buffer.alloc(afterBytes, 1));
      } else {
        this.destroy(new Error('client went away'));
      }
    },
  });
}

describe('LocalDiskStorage', () => {
  it('streams an object in and reads it back, whole or by range', async () => {
    const stored = await storage.put('renders', 'u1/a.png', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(stored).toEqual({ bucket: 'renders', path: 'u1/a.png', size: 11 });
    expect(await text(await storage.read('renders', 'u1/a.png'))).toBe('hello world');
    expect(await text(await storage.read('renders', 'u1/a.png', { start: 6, end: 10 }))).toBe('world');
    expect((await storage.stat('renders', 'u1/a.png'))?.size).toBe(11);
  });

  it('never overwrites an existing object', async () => {
    await storage.put('images', 'x/one.jpg', Buffer.from('first'));
    await expect(storage.put('images', 'x/one.jpg', Buffer.from('second'))).rejects.toBeInstanceOf(ObjectExistsError);
    expect(await text(await storage.read('images', 'x/one.jpg'))).toBe('first');
    expect(fs.readdirSync(path.join(root, '.incoming'))).toEqual([]);
  });

  it('leaves nothing behind when the source stream fails midway', async () => {
    await expect(storage.put('clips', 'x/broken.mp4', failingStream(100_000))).rejects.toThrow('client went away');
    expect(await storage.stat('clips', 'x/broken.mp4')).toBeNull();
    expect(fs.readdirSync(path.join(root, '.incoming'))).toEqual([]);
  });

  it('keeps buckets apart', async () => {
    await storage.put('videos', 'same/path.mp4', Buffer.from('v'));
    expect(await storage.stat('clips', 'same/path.mp4')).toBeNull();
    await expect(storage.read('clips', 'same/path.mp4')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('removes the folders a removal leaves empty, and only those (a bucket is flat, as in S3)', async () => {
    await storage.put('renders', 'w1/p1/a.png', Buffer.from('a'));
    await storage.put('renders', 'w1/p1/b.png', Buffer.from('b'));
    await storage.put('renders', 'w1/p2/c.png', Buffer.from('c'));
    await storage.put('renders', 'w2/d.png', Buffer.from('d'));
    await storage.remove('renders', ['w1/p1/a.png']);
    expect(fs.existsSync(path.join(root, 'renders', 'w1', 'p1'))).toBe(true);
    await storage.remove('renders', ['w1/p1/b.png', 'w2/d.png']);
    expect(fs.readdirSync(path.join(root, 'renders')).sort()).toEqual(['w1']);
    expect(fs.readdirSync(path.join(root, 'renders', 'w1'))).toEqual(['p2']);
    await storage.removePrefix('renders', 'w1/p2');
    expect(fs.readdirSync(path.join(root, 'renders'))).toEqual([]);
    expect(await storage.list('renders', '')).toEqual([]);
  });

  it('writes into a folder that removals keep emptying and pruning', async () => {
    // each round: a write and a removal in the same folder at once; the write may find its folder pruned in between
    for (let round = 0; round < 50; round++) {
      await storage.put('clips', `w/p/old-${round}.mp4`, Buffer.from('old'));
      await Promise.all([storage.put('clips', `w/p/new-${round}.mp4`, Buffer.from('new')), storage.remove('clips', [`w/p/old-${round}.mp4`])]);
      expect(await text(await storage.read('clips', `w/p/new-${round}.mp4`))).toBe('new');
      await storage.remove('clips', [`w/p/new-${round}.mp4`]);
    }
    expect(fs.readdirSync(path.join(root, 'clips'))).toEqual([]);
  });

  it('makes its folders again when a removal prunes one while the recursive mkdir is making them', async () => {
    // what a concurrent remove() does at the worst moment: the parent the mkdir has just made is pruned before the child
    const realMkdir = fsp.mkdir;
    const parent = path.join(root, 'clips', 'race');
    let pruned = 0;
    const mkdir = jest.spyOn(fsp, 'mkdir').mockImplementation(async (dir, options) => {
      if (pruned === 0 && dir === path.join(parent, 'p')) {
        pruned++;
        await realMkdir(parent, { recursive: true });
        await fsp.rmdir(parent);
        const gone = Object.assign(new Error(`ENOENT: no such file or directory, mkdir '${String(dir)}'`), { code: 'ENOENT' });
        throw gone;
      }
      return realMkdir(dir, options);
    });
    try {
      await storage.put('clips', 'race/p/a.mp4', Buffer.from('a'));
    } finally {
      mkdir.mockRestore();
    }
    expect(pruned).toBe(1);
    expect(await text(await storage.read('clips', 'race/p/a.mp4'))).toBe('a');
  });

  it.each(['../escape.png', 'a/../../b.png', '/abs.png', 'a//b.png', '', 'a/.hidden', 'a/b\\c.png', 'a/b c.png', 'a/\u0000.png'])(
    'refuses the path %j',
    async (bad) => {
      expect(isValidObjectPath(bad)).toBe(false);
      await expect(storage.put('renders', bad, Buffer.from('x'))).rejects.toBeInstanceOf(InvalidObjectPathError);
    },
  );

  it('removes objects (missing ones ignored) and whole prefixes', async () => {
    await storage.put('drafts', 'p1/a.png', Buffer.from('a'));
    await storage.put('drafts', 'p1/b.png', Buffer.from('b'));
    await storage.put('drafts', 'p2/c.png', Buffer.from('c'));
    await storage.remove('drafts', ['p1/a.png', 'p1/never.png']);
    expect(await storage.stat('drafts', 'p1/a.png')).toBeNull();
    expect(await storage.stat('drafts', 'p1/b.png')).not.toBeNull();
    await storage.removePrefix('drafts', 'p1');
    expect(await storage.stat('drafts', 'p1/b.png')).toBeNull();
    expect(await storage.stat('drafts', 'p2/c.png')).not.toBeNull();
  });

  it('hands out a local path for tools that read files', async () => {
    await storage.put('renders', 'u/x.png', Buffer.from('pixels'));
    const local = await storage.localFile('renders', 'u/x.png');
    expect(fs.readFileSync(local.path, 'utf8')).toBe('pixels');
    await expect(storage.localFile('renders', 'u/missing.png')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });
});

describe('UrlSigner', () => {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const signer = new UrlSigner({ secret: 'test-secret', ttlSeconds: 3600, now: () => now });
  const params = (url: string): { expires: string; sig: string } => {
    const u = new URL(url, 'http://x');
    return { expires: u.searchParams.get('expires') ?? '', sig: u.searchParams.get('sig') ?? '' };
  };

  beforeEach(() => {
    now = Date.UTC(2026, 10, 22, 12, 0, 0);
  });

  it('signs bucket, path and expiry, valid for at least the TTL', () => {
    const url = signer.sign('renders', 'u/a.png');
    expect(url.startsWith('/api/files/renders/u/a.png?expires=')).toBe(true);
    const { expires, sig } = params(url);
    expect(Number(expires) * 1000 - now).toBeGreaterThanOrEqual(3600 * 1000);
    expect(signer.verify('renders', 'u/a.png', expires, sig)).toBe('valid');
  });

  it('refuses a link whose bucket, path, expiry or signature was changed', () => {
    const { expires, sig } = params(signer.sign('renders', 'u/a.png'));
    expect(signer.verify('images', 'u/a.png', expires, sig)).toBe('invalid');
    expect(signer.verify('renders', 'u/b.png', expires, sig)).toBe('invalid');
    expect(signer.verify('renders', 'u/a.png', String(Number(expires) + 3600), sig)).toBe('invalid');
    expect(signer.verify('renders', 'u/a.png', expires, sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A'))).toBe('invalid');
    expect(signer.verify('renders', 'u/a.png', expires, undefined)).toBe('invalid');
    expect(signer.verify('renders', 'u/a.png', 'soon', sig)).toBe('invalid');
    const other = new UrlSigner({ secret: 'another-secret', ttlSeconds: 3600, now: () => now });
    expect(other.verify('renders', 'u/a.png', expires, sig)).toBe('invalid');
  });

  it('reports a correctly signed link past its expiry as expired', () => {
    const { expires, sig } = params(signer.sign('renders', 'u/a.png', 60));
    now = Number(expires) * 1000 + 1;
    expect(signer.verify('renders', 'u/a.png', expires, sig)).toBe('expired');
  });

  it('gives one file the same link for a while, so browsers can cache it', () => {
    now += 30_000; // inside a 10-minute expiry step
    const first = signer.sign('renders', 'u/a.png');
    now += 5000;
    expect(signer.sign('renders', 'u/a.png')).toBe(first);
  });
});

describe('file URLs', () => {
  it('reads bucket and path back from signed, unsigned and absolute links, and nothing else', () => {
    expect(parseFileUrl(fileUrl('clips', 'u/c.mp4'))).toEqual({ bucket: 'clips', path: 'u/c.mp4' });
    expect(parseFileUrl('http://host:3000/api/files/videos/u/v.mp4?expires=1&sig=x')).toEqual({ bucket: 'videos', path: 'u/v.mp4' });
    expect(parseFileUrl('/api/files/secrets/u/v.mp4')).toBeNull();
    expect(parseFileUrl('/api/files/renders/../x')).toBeNull();
    expect(parseFileUrl('https://cdn.example.com/x.png')).toBeNull();
  });
});
