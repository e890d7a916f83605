/**
 * Working copies for the providers (activities/workingCopies.ts) on real local storage: a large original gives a
 * reduced, upright copy and stays byte for byte as it was; a file already within the size goes as its own bytes; a
 * GIF is re-encoded; a missing file and one that is not an image fail with their own errors.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../config/env';
import { createStorage, ObjectNotFoundError, type Storage } from '../../storage';
import { AS_IS_MAX_BYTES, UnreadableImageError, workingCopy } from '../../activities/workingCopies';

let dir: string;
let storage: Storage;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function stored(name: string, bytes: Buffer): Promise<{ bucket: 'drafts'; path: string }> {
  const file = { bucket: 'drafts' as const, path: `u1/d1/uploads/${name}` };
  await storage.objects.put(file.bucket, file.path, bytes);
  return file;
}

async function storedBytes(file: { bucket: 'drafts'; path: string }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.objects.read(file.bucket, file.path)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rs-working-copies-'));
  storage = createStorage({ ...loadConfig(), storageBackend: 'local', storageDir: dir });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('workingCopy', () => {
  it('reduces a 6000x4000 original to the size asked for and leaves the original as it was', async () => {
    const original = await sharp({ create: { width: 6000, height: 4000, channels: 3, background: { r: 90, g: 120, b: 160 }, noise: { type: 'gaussian', mean: 128, sigma: 20 } } })
      .jpeg({ quality: 85 })
      .toBuffer();
    const file = await stored('tower.jpg', original);
    const copy = await workingCopy(storage.objects, file, 4096);
    expect(copy).toMatchObject({ width: 4096, height: 2731, original: { width: 6000, height: 4000 }, reduced: true });
    const meta = await sharp(copy.image).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 4096, 2731]);
    expect(sha256(await storedBytes(file))).toBe(sha256(original));
  });

  it('passes a file already within the size as its own bytes', async () => {
    const png = await sharp({ create: { width: 1200, height: 800, channels: 4, background: { r: 10, g: 200, b: 90, alpha: 0.5 } } }).png().toBuffer();
    expect(png.length).toBeLessThan(AS_IS_MAX_BYTES);
    const copy = await workingCopy(storage.objects, await stored('glass.png', png), 4096);
    expect(copy).toMatchObject({ width: 1200, height: 800, reduced: false });
    expect(copy.image.equals(png)).toBe(true);
  });

  it('keeps transparency (PNG) when it reduces an image that has it', async () => {
    const png = await sharp({ create: { width: 3000, height: 1000, channels: 4, background: { r: 10, g: 200, b: 90, alpha: 0.5 } } }).png().toBuffer();
    const copy = await workingCopy(storage.objects, await stored('wide.png', png), 2048);
    const meta = await sharp(copy.image).metadata();
    expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', 2048, 683, true]);
  });

  it('turns a rotated photo upright and re-encodes a GIF', async () => {
    // stored 400x300 with EXIF orientation 6 (shown rotated a quarter turn: 300x400)
    const rotated = await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: 200, g: 30, b: 30 } } }).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const upright = await workingCopy(storage.objects, await stored('rotated.jpg', rotated), 4096);
    expect(upright).toMatchObject({ width: 300, height: 400, original: { width: 300, height: 400 }, reduced: false });
    expect((await sharp(upright.image).metadata()).orientation ?? 1).toBe(1);

    const gif = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 1, g: 2, b: 3 } } }).gif().toBuffer();
    const fromGif = await workingCopy(storage.objects, await stored('loop.gif', gif), 4096);
    // a GIF's palette can hold transparency: its copy is a PNG, which every provider takes
    expect((await sharp(fromGif.image).metadata()).format).toBe('png');
    expect([fromGif.width, fromGif.height]).toEqual([64, 48]);
  });

  it('fails with ObjectNotFoundError for a missing file and UnreadableImageError for bytes that are not an image', async () => {
    await expect(workingCopy(storage.objects, { bucket: 'drafts', path: 'u1/d1/uploads/gone.png' }, 4096)).rejects.toBeInstanceOf(ObjectNotFoundError);
    const junk = await stored('junk.png', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(4096, 7)]));
    await expect(workingCopy(storage.objects, junk, 4096)).rejects.toBeInstanceOf(UnreadableImageError);
  });
});
