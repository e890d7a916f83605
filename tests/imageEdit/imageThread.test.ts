/**
 * The worker's image thread (activities/imageThread.ts): the same bytes as the work on the caller's thread, errors
 * that arrive as they were thrown, the caller's buffers left whole, and what happens when the thread dies under a
 * task, cannot start at all, or is closed.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ImageThread, ImageThreadGoneError } from '../../activities/imageThread';
import { inProcessImageWork } from '../../activities/imageWork';
import { loadConfig } from '../../config/env';
import { countsAsProviderFailure, ProviderError } from '../../providers/errors';
import { houseStill } from '../support/stills';

// every line the threads log, parsed
const logged: Array<{ level: number; msg: string }> = [];
const logger = pino(
  { level: 'trace' },
  new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logged.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  }),
);

let dir: string;
let sourcePath: string;
let thread: ImageThread;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'image-thread-'));
  sourcePath = path.join(dir, 'render.jpg');
  await houseStill(1200, 800).jpeg({ quality: 90 }).toFile(sourcePath);
  thread = new ImageThread({ logger });
});

afterAll(async () => {
  await thread.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the image thread', () => {
  it('gives the bytes the caller’s own thread gives, task by task', async () => {
    // its tasks are bound, as the in-process functions are: taken off the object they still reach the thread
    const { readSourceImage } = thread;
    const source = await readSourceImage(sourcePath);
    expect(Buffer.isBuffer(source)).toBe(true);
    expect(source.equals(await inProcessImageWork.readSourceImage(sourcePath))).toBe(true);

    const request = { image: source, prompt: 'snowy winter evening', format: 'square' as const, quality: 'hd' as const };
    const edited = await thread.imageEdit.edit(request);
    const editedHere = await inProcessImageWork.imageEdit.edit(request);
    expect(edited.image.equals(editedHere.image)).toBe(true);
    expect({ ...edited, image: null }).toEqual({ ...editedHere, image: null });

    const upscaled = await thread.upscale.upscale({ image: edited.image, scale: 2 });
    const upscaledHere = await inProcessImageWork.upscale.upscale({ image: edited.image, scale: 2 });
    expect(upscaled.image.equals(upscaledHere.image)).toBe(true);
    // the 800 px square the edit cuts from a 1200 x 800 render, twice over
    expect(upscaled).toMatchObject({ width: 1600, height: 1600, mime: 'image/jpeg' });

    const [preview, thumbnail] = await Promise.all([thread.watermarkPreview(upscaled.image), thread.imageThumbnail(upscaled.image)]);
    const previewHere = await inProcessImageWork.watermarkPreview(upscaled.image);
    expect(preview.data.equals(previewHere.data)).toBe(true);
    expect(preview).toMatchObject({ width: 1024, height: 1024 });
    expect(thumbnail.equals(await inProcessImageWork.imageThumbnail(upscaled.image))).toBe(true);
    expect(thread.stats()).toEqual({ threads: 1, started: 1, answered: 5, lost: 0, inProcess: 0 });
  });

  it('leaves the caller’s buffers whole: what it sends is copied, not moved', async () => {
    const image = await houseStill(640, 360).jpeg().toBuffer();
    const copy = Buffer.from(image);
    await Promise.all([thread.watermarkPreview(image), thread.imageThumbnail(image)]);
    expect(image.length).toBe(copy.length);
    expect(image.equals(copy)).toBe(true);
  });

  it('hands a provider’s error back as the same ProviderError, and any other error with its message', async () => {
    const image = await houseStill(320, 180).jpeg().toBuffer();
    const refused = await thread.imageEdit.edit({ image, prompt: '   ' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProviderError);
    expect(refused).toMatchObject({ code: 'INPUT', message: 'The edit prompt is empty', retryable: false });
    expect(countsAsProviderFailure(refused)).toBe(false);

    const tooBig = await thread.upscale.upscale({ image, scale: 5 }).catch((err: unknown) => err);
    expect(tooBig).toMatchObject({ name: 'ProviderError', code: 'INPUT', message: 'Upscale factor must be an integer from 1 to 4, got 5' });

    const notImage = path.join(dir, 'notes.txt');
    await fs.writeFile(notImage, 'not an image');
    const unreadable = await thread.readSourceImage(notImage).catch((err: unknown) => err);
    const unreadableHere = await inProcessImageWork.readSourceImage(notImage).catch((err: unknown) => err);
    expect(unreadable).toBeInstanceOf(Error);
    expect(unreadable).not.toBeInstanceOf(ProviderError);
    expect((unreadable as Error).message).toBe((unreadableHere as Error).message);
  });

  it('fails the tasks of a thread that dies under them, and starts a new thread for the next task', async () => {
    const crashing = new ImageThread({ logger, entry: path.join(__dirname, 'support', 'crashingImageThread.ts') });
    try {
      const lost = await crashing.readSourceImage(sourcePath).catch((err: unknown) => err);
      expect(lost).toBeInstanceOf(ImageThreadGoneError);
      expect((lost as Error).message).toBe('image thread gone: exited with code 7');
      await expect(crashing.imageThumbnail(Buffer.from('x'))).rejects.toThrow('image thread gone: exited with code 7');
      expect(crashing.stats()).toEqual({ threads: 0, started: 2, answered: 0, lost: 2, inProcess: 0 });
    } finally {
      await crashing.close();
    }
  });

  it('runs the work on the caller’s thread when its thread cannot start, and says so once', async () => {
    logged.length = 0;
    const unstartable = new ImageThread({ logger, entry: path.join(__dirname, 'support', 'unstartableImageThread.ts') });
    try {
      const first = await unstartable.readSourceImage(sourcePath);
      expect(first.equals(await inProcessImageWork.readSourceImage(sourcePath))).toBe(true);
      const thumbnail = await unstartable.imageThumbnail(first);
      expect(thumbnail.equals(await inProcessImageWork.imageThumbnail(first))).toBe(true);
      expect(unstartable.stats()).toEqual({ threads: 0, started: 1, answered: 0, lost: 0, inProcess: 2 });
      expect(logged.filter((line) => line.level === 40).map((line) => line.msg)).toEqual(["image thread could not start; image work runs on the worker's own thread"]);
    } finally {
      await unstartable.close();
    }
  });

  it('finishes what is under way when closed, then ends the thread and refuses every task after', async () => {
    const closing = new ImageThread({ logger });
    const image = await houseStill(1600, 900).jpeg().toBuffer();
    const underway = closing.watermarkPreview(image);
    expect(closing.stats().threads).toBe(1);
    await closing.close();
    // answered, not failed: the thread was let finish rather than stopped
    expect((await underway).data.equals((await inProcessImageWork.watermarkPreview(image)).data)).toBe(true);
    await expect(closing.imageThumbnail(image)).rejects.toThrow('image thread gone: closed');
    expect(closing.stats()).toEqual({ threads: 0, started: 1, answered: 1, lost: 0, inProcess: 0 });
  });

  it('is on unless IMAGE_THREAD=off, and refuses any other value', () => {
    expect(loadConfig({ ...process.env, IMAGE_THREAD: undefined }).imageThread).toBe(true);
    expect(loadConfig({ ...process.env, IMAGE_THREAD: 'on' }).imageThread).toBe(true);
    expect(loadConfig({ ...process.env, IMAGE_THREAD: 'off' }).imageThread).toBe(false);
    expect(() => loadConfig({ ...process.env, IMAGE_THREAD: 'yes' })).toThrow('IMAGE_THREAD must be "on" or "off", got "yes"');
  });
});
