import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { FalQueueClient, falAppId } from '../../providers/fal/queueClient';
import { FalImageEditProvider, FalImageToVideoProvider, FalUpscaleProvider, decodeFalJobId } from '../../providers/fal/providers';
import { createProviders } from '../../providers';
import { ProviderError } from '../../providers/errors';
import { probeVideo } from '../../providers/media/ffmpeg';
import type { VideoProgress } from '../../providers/types';
import { startFakeFal, type FakeFal } from '../support/fakeFal';

const KEY = 'test-key-123';
const FAST = { pollIntervalMs: 5, maxWaitMs: 10_000 };

async function photo(width = 640, height = 360): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="60%" fill="#3d85c6"/><rect y="60%" width="100%" height="40%" fill="#38761d"/><rect x="30%" y="30%" width="40%" height="40%" fill="#e6e0d4"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 95 }).toBuffer();
}

async function meanColour(image: Buffer): Promise<number[]> {
  const stats = await sharp(image).stats();
  return stats.channels.slice(0, 3).map((c) => c.mean);
}

function decodeDataUri(value: unknown): Buffer {
  const match = /^data:image\/jpeg;base64,(.+)$/.exec(String(value));
  if (!match) throw new Error(`not a JPEG data URI: ${String(value).slice(0, 40)}`);
  return Buffer.from(match[1], 'base64');
}

describe('fal.ai queue providers against a local server speaking the protocol', () => {
  let fal: FakeFal;
  let workDir: string;
  const client = (overrides: Partial<ConstructorParameters<typeof FalQueueClient>[0]> = {}) =>
    new FalQueueClient({ baseUrl: fal.baseUrl, apiKey: KEY, ...overrides });

  beforeAll(async () => {
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fal-test-'));
    fal = await startFakeFal({
      apiKey: KEY,
      models: {
        'fake/edit': { kind: 'image-edit', behaviour: 'succeed', queuedPolls: 1, runningPolls: 2 },
        'fake/nano-banana/edit': { kind: 'image-edit', behaviour: 'succeed' },
        'fake/esrgan': { kind: 'upscale', behaviour: 'succeed' },
        'fake/edit-invalid': { kind: 'image-edit', behaviour: 'fail-validation' },
        'fake/edit-500': { kind: 'image-edit', behaviour: 'submit-500' },
        'fake/edit-never': { kind: 'image-edit', behaviour: 'never-complete' },
        'fake/edit-hangs': { kind: 'image-edit', behaviour: 'status-hangs' },
        'fake/kling/v2/image-to-video': { kind: 'video', behaviour: 'succeed', queuedPolls: 2, runningPolls: 4 },
        'fake/video-fails': { kind: 'video', behaviour: 'fail-runtime', queuedPolls: 0, runningPolls: 1 },
        'fake/video-slow': { kind: 'video', behaviour: 'never-complete', queuedPolls: 0 },
      },
    });
  });

  afterAll(async () => {
    await fal.close();
    await fs.rm(workDir, { recursive: true, force: true });
  });

  describe('FalQueueClient', () => {
    it('uses only the app part of a model id for request URLs', () => {
      expect(falAppId('fal-ai/kling-video/v2.1/standard/image-to-video')).toBe('fal-ai/kling-video');
      expect(falAppId('fal-ai/esrgan')).toBe('fal-ai/esrgan');
      expect(falAppId('workflows/me/my-flow/run')).toBe('workflows/me/my-flow');
      expect(() => falAppId('esrgan')).toThrow(ProviderError);
    });

    it('walks a request through IN_QUEUE, IN_PROGRESS with logs, and COMPLETED', async () => {
      const c = client();
      const submitted = await c.submit('fake/edit', { prompt: 'night', image_url: `data:image/jpeg;base64,${(await photo()).toString('base64')}` });
      expect(submitted.statusUrl).toBe(`${fal.baseUrl}/fake/edit/requests/${submitted.requestId}/status`);
      expect(submitted.cancelUrl).toBe(`${fal.baseUrl}/fake/edit/requests/${submitted.requestId}/cancel`);
      const seen: string[] = [];
      await c.waitUntilCompleted('fake/edit', submitted.requestId, {
        pollIntervalMs: 1,
        deadline: Date.now() + 5000,
        onStatus: (s) => void seen.push(s.status === 'IN_QUEUE' ? `Q${s.queuePosition}` : s.status === 'IN_PROGRESS' ? `P:${s.logs[0]?.message}` : 'C'),
      });
      expect(seen).toEqual(['Q0', 'P:step 1: 33% done', 'P:step 2: 67% done', 'C']);
      const output = await c.result('fake/edit', submitted.requestId);
      expect(output).toHaveProperty('images');
    });

    it('sends "Authorization: Key <key>" on every queue call and no credentials to file downloads', async () => {
      const provider = new FalImageEditProvider(client(), 'fake/edit', FAST);
      const before = fal.log.length;
      await provider.edit({ image: await photo(), prompt: 'night' });
      const calls = fal.log.slice(before);
      const queueCalls = calls.filter((c) => !c.path.startsWith('/files/'));
      const downloads = calls.filter((c) => c.path.startsWith('/files/'));
      expect(queueCalls.map((c) => c.method)).toEqual(['POST', 'GET', 'GET', 'GET', 'GET', 'GET']);
      expect(queueCalls.every((c) => c.authorization === `Key ${KEY}`)).toBe(true);
      expect(downloads).toHaveLength(1);
      expect(downloads[0].authorization).toBeUndefined();
    });

    it('maps a refused key to a non-retryable AUTH error', async () => {
      const error = await client({ apiKey: 'wrong' }).submit('fake/edit', {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'AUTH', retryable: false, httpStatus: 401 });
      expect((error as Error).message).toBe('fal.ai refused the API key (HTTP 401): Invalid API key');
      await expect(client({ apiKey: '' }).submit('fake/edit', {})).rejects.toThrow('FAL_KEY is not set');
    });

    it('maps a 500 on submit to a retryable UNAVAILABLE error', async () => {
      await expect(client().submit('fake/edit-500', {})).rejects.toMatchObject({ code: 'UNAVAILABLE', retryable: true, httpStatus: 500 });
    });

    it('times out a call the server never answers', async () => {
      const c = client({ requestTimeoutMs: 100 });
      const { requestId } = await c.submit('fake/edit-hangs', {});
      // the server never answers, so only the client's 100 ms timer can end the call (its message says so)
      const error = await c.status('fake/edit-hangs', requestId).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'TIMEOUT', retryable: true });
      expect((error as Error).message).toContain('timed out after 100ms');
    });

    it('reports an unreachable server as UNAVAILABLE', async () => {
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const c = new FalQueueClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY });
      await expect(c.submit('fake/edit', {})).rejects.toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    });

    it('treats an unknown request id as UNKNOWN_JOB and a cancel after completion as done', async () => {
      const c = client();
      await expect(c.status('fake/edit', 'no-such-request')).rejects.toMatchObject({ code: 'UNKNOWN_JOB' });
      const { requestId } = await c.submit('fake/esrgan', { image_url: `data:image/jpeg;base64,${(await photo(20, 10)).toString('base64')}` });
      await c.waitUntilCompleted('fake/esrgan', requestId, { pollIntervalMs: 1, deadline: Date.now() + 5000 });
      await expect(c.cancel('fake/esrgan', requestId)).resolves.toBeUndefined();
      expect(fal.log.at(-1)).toMatchObject({ method: 'PUT', status: 400 });
    });
  });

  describe('FalImageEditProvider and FalUpscaleProvider', () => {
    it('sends the framed source as a data URI and returns the downloaded result', async () => {
      const source = await photo(640, 360);
      const provider = new FalImageEditProvider(client(), 'fake/edit', FAST);
      const result = await provider.edit({ image: source, prompt: '  dusk please ' });
      const job = fal.jobs.filter((j) => j.model === 'fake/edit').at(-1)!;
      expect(job.input.prompt).toBe('dusk please');
      const sent = await sharp(decodeDataUri(job.input.image_url)).metadata();
      expect([sent.width, sent.height]).toEqual([360, 360]); // square by default
      expect(result).toMatchObject({ mime: 'image/jpeg', width: 360, height: 360, model: 'fake/edit', description: 'edited: dusk please' });
      // the fake model inverts: the result is the negative of what was sent
      const [sentMean, resultMean] = await Promise.all([meanColour(decodeDataUri(job.input.image_url)), meanColour(result.image)]);
      resultMean.forEach((m, i) => expect(Math.abs(m - (255 - sentMean[i]))).toBeLessThan(4));
    });

    it('gives multi-image models an image_urls list', async () => {
      const provider = new FalImageEditProvider(client(), 'fake/nano-banana/edit', FAST);
      await provider.edit({ image: await photo(), prompt: 'snow', format: 'landscape' });
      const job = fal.jobs.filter((j) => j.model === 'fake/nano-banana/edit').at(-1)!;
      expect(Array.isArray(job.input.image_urls)).toBe(true);
      expect(job.input.image_url).toBeUndefined();
      const sent = await sharp(decodeDataUri((job.input.image_urls as string[])[0])).metadata();
      expect([sent.width, sent.height]).toEqual([640, 360]);
    });

    it('upscales by 2 by default', async () => {
      const provider = new FalUpscaleProvider(client(), 'fake/esrgan', FAST);
      const result = await provider.upscale({ image: await photo(300, 200) });
      expect(result).toMatchObject({ width: 600, height: 400, mime: 'image/png', model: 'fake/esrgan' });
      expect(fal.jobs.filter((j) => j.model === 'fake/esrgan').at(-1)!.input.scale).toBe(2);
    });

    it('reports a request the model rejected as a non-retryable VALIDATION error with fal\'s detail', async () => {
      const provider = new FalImageEditProvider(client(), 'fake/edit-invalid', FAST);
      const error = await provider.edit({ image: await photo(), prompt: 'night' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'VALIDATION', retryable: false, httpStatus: 422 });
      expect((error as Error).message).toContain('body.image_url: Image could not be processed');
    });

    it('gives up on a request that never completes, and cancels it', async () => {
      const provider = new FalImageEditProvider(client(), 'fake/edit-never', { pollIntervalMs: 10, maxWaitMs: 150 });
      await expect(provider.edit({ image: await photo(), prompt: 'night' })).rejects.toMatchObject({ code: 'TIMEOUT' });
      const job = fal.jobs.filter((j) => j.model === 'fake/edit-never').at(-1)!;
      expect(job.cancelled).toBe(true);
      // it looked until the deadline: how many looks fit in 150 ms depends on the machine's load, so only that it looked
      expect(job.statusPolls).toBeGreaterThanOrEqual(1);
    });
  });

  describe('FalImageToVideoProvider', () => {
    const provider = (model = 'fake/kling/v2/image-to-video', overrides: Partial<{ pollIntervalMs: number; maxWaitMs: number }> = {}) =>
      new FalImageToVideoProvider(client(), model, { workDir, pollIntervalMs: 5, maxWaitMs: 10_000, expectedRunMs: 60_000, ...overrides });

    it('submits once, reports queue position and logged progress on every poll, and downloads the clip', async () => {
      const video = provider();
      const { jobId } = await video.submit({ image: await photo(), effect: 'Drone Shot', platform: 'TikTok', aspectRatio: '9:16', durationSeconds: 5 });
      const decoded = decodeFalJobId(jobId);
      expect(decoded.model).toBe('fake/kling/v2/image-to-video');
      const job = fal.jobs.find((j) => j.requestId === decoded.requestId)!;
      expect(job.input).toMatchObject({ duration: '5' });
      expect(String(job.input.prompt)).toContain('drone shot');
      const sent = await sharp(decodeDataUri(job.input.image_url)).metadata();
      expect([sent.width, sent.height]).toEqual([720, 1280]);

      const progress: VideoProgress[] = [];
      const result = await video.wait(jobId, { onProgress: (p) => void progress.push(p) });
      expect(progress.slice(0, 2).map((p) => [p.state, p.queuePosition])).toEqual([
        ['queued', 1],
        ['queued', 0],
      ]);
      expect(progress.slice(2, 6).map((p) => p.progress)).toEqual([20, 40, 60, 80]);
      expect(progress.at(-1)).toMatchObject({ message: 'Downloading the clip' });
      expect(progress.map((p) => p.progress).every((v, i, all) => i === 0 || v >= all[i - 1])).toBe(true);

      const probe = await probeVideo(result.path);
      expect(result).toMatchObject({ mime: 'video/mp4', width: probe.width, height: probe.height, model: 'fake/kling/v2/image-to-video' });
      expect(result.durationSeconds).toBeCloseTo(5, 1);
      expect(result.sizeBytes).toBe((await fs.stat(result.path)).size);
      await video.release(jobId);
      await expect(fs.access(result.path)).rejects.toThrow();
    });

    it('resumes a submitted job from its id alone after a restart, without submitting again', async () => {
      const first = provider();
      const { jobId } = await first.submit({ image: await photo(), effect: 'Zoom In', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 });
      await expect(first.status(jobId)).resolves.toMatchObject({ state: 'queued' });
      const submissions = fal.jobs.length;
      // a new worker, with a different model configured since: the id still names the job's own model
      const restarted = provider('fake/video-fails');
      const result = await restarted.wait(jobId);
      expect(result.model).toBe('fake/kling/v2/image-to-video');
      expect(fal.jobs.length).toBe(submissions);
      await expect(restarted.status(jobId)).resolves.toMatchObject({ state: 'completed', progress: 100 });
      await restarted.release(jobId);
    });

    it('fails with JOB_FAILED when the model errors', async () => {
      const video = provider('fake/video-fails');
      const { jobId } = await video.submit({ image: await photo(), effect: 'Bring to Life', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 });
      const error = await video.wait(jobId).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'JOB_FAILED', retryable: false });
      expect((error as Error).message).toContain('runner_disconnected');
    });

    it('keeps heartbeating through a long job and times out at the deadline counted from submission', async () => {
      // a beat per look at the job: more than two looks fit in the wait on any machine (10 ms apart, a second in all)
      const video = provider('fake/video-slow', { pollIntervalMs: 10, maxWaitMs: 1000 });
      const { jobId } = await video.submit({ image: await photo(), effect: 'Walk Through', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 });
      let beats = 0;
      await expect(video.wait(jobId, { onProgress: () => void (beats += 1) })).rejects.toMatchObject({ code: 'TIMEOUT' });
      expect(beats).toBeGreaterThan(2);
    });

    it('stops polling when the activity is cancelled and cancels the job on request', async () => {
      const video = provider('fake/video-slow', { pollIntervalMs: 20 });
      const { jobId } = await video.submit({ image: await photo(), effect: 'Pan Left', platform: 'YouTube', aspectRatio: '16:9', durationSeconds: 5 });
      const controller = new AbortController();
      const waiting = video.wait(jobId, { signal: controller.signal, onProgress: () => controller.abort() });
      await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
      await video.cancel(jobId);
      expect(fal.jobs.find((j) => j.requestId === decodeFalJobId(jobId).requestId)!.cancelled).toBe(true);
      await expect(video.status(jobId)).resolves.toMatchObject({ state: 'failed', error: 'Request was cancelled' });
    });

    it('refuses ids that are not its own', async () => {
      await expect(provider().wait('local-00000000-0000-0000-0000-000000000000')).rejects.toMatchObject({ code: 'UNKNOWN_JOB' });
    });
  });

  describe('createProviders', () => {
    const falConfig = (overrides: Partial<Parameters<typeof createProviders>[0]> = {}) => ({
      providerKind: 'fal' as const,
      falBaseUrl: fal.baseUrl,
      falApiKey: KEY,
      falImageEditModel: 'fake/edit',
      falUpscaleModel: 'fake/esrgan',
      falVideoModel: 'fake/kling/v2/image-to-video',
      ...overrides,
    });

    it('picks fal by configuration and works end to end through the breakers', async () => {
      const providers = createProviders(falConfig(), { imagePollIntervalMs: 5, workDir });
      expect(providers.kind).toBe('fal');
      const edited = await providers.imageEdit.edit({ image: await photo(), prompt: 'night' });
      expect(edited.model).toBe('fake/edit');
      const up = await providers.upscale.upscale({ image: edited.image });
      expect([up.width, up.height]).toEqual([edited.width * 2, edited.height * 2]);
      await expect(providers.promptRefiner.refine({ prompt: 'night' })).resolves.toMatchObject({ refinementMethod: 'rule-based' });
      expect(providers.breakers.imageEdit.state).toBe('CLOSED');
    });

    it('opens the capability breaker after 5 failing calls and then fails fast without reaching fal', async () => {
      const providers = createProviders(falConfig({ falImageEditModel: 'fake/edit-500' }), { imagePollIntervalMs: 5, workDir });
      const image = await photo();
      for (let i = 0; i < 5; i += 1) await expect(providers.imageEdit.edit({ image, prompt: 'night' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      const before = fal.log.length;
      await expect(providers.imageEdit.edit({ image, prompt: 'night' })).rejects.toThrow('Circuit breaker "fal:imageEdit" is OPEN');
      expect(fal.log.length).toBe(before);
      // other capabilities have their own breaker
      expect(providers.breakers.upscale.state).toBe('CLOSED');
      await expect(providers.upscale.upscale({ image })).resolves.toMatchObject({ model: 'fake/esrgan' });
    });

    it('does not count rejected inputs against the breaker', async () => {
      const providers = createProviders(falConfig({ falImageEditModel: 'fake/edit-invalid' }), { imagePollIntervalMs: 5, workDir });
      for (let i = 0; i < 6; i += 1) await expect(providers.imageEdit.edit({ image: await photo(), prompt: 'x' })).rejects.toMatchObject({ code: 'VALIDATION' });
      expect(providers.breakers.imageEdit.state).toBe('CLOSED');
      for (let i = 0; i < 6; i += 1) await expect(providers.imageEdit.edit({ image: await photo(), prompt: ' ' })).rejects.toMatchObject({ code: 'INPUT' });
      expect(providers.breakers.imageEdit.state).toBe('CLOSED');
    });

    it('picks the local implementations by default configuration', async () => {
      const providers = createProviders({ ...falConfig(), providerKind: 'local' }, { workDir });
      expect(providers.kind).toBe('local');
      await expect(providers.imageEdit.edit({ image: await photo(), prompt: 'night' })).resolves.toMatchObject({ model: 'local/sharp-grade' });
      await expect(providers.upscale.upscale({ image: await photo(100, 50) })).resolves.toMatchObject({ width: 200, height: 100, model: 'local/lanczos3' });
      const { jobId } = await providers.imageToVideo.submit({ image: await photo(), effect: 'Zoom In', platform: 'Square', aspectRatio: '1:1', durationSeconds: 5 });
      expect(jobId).toMatch(/^local-/);
      await providers.imageToVideo.release(jobId);
    });
  });
});
