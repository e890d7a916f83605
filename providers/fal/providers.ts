/**
 * Hosted implementations on fal.ai's queue: image edit (Nano Banana Edit, FLUX Kontext ...), upscale
 * (ESRGAN) and image-to-video (Kling ...), each model set by configuration. Inputs go as data URIs;
 * outputs are downloaded from the URLs in the result.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type {
  GeneratedImage,
  HostedImageJobs,
  ImageEditProvider,
  ImageEditRequest,
  ImageToVideoProvider,
  UpscaleProvider,
  UpscaleRequest,
  VideoJobHandle,
  VideoJobRequest,
  VideoJobStatus,
  VideoProgress,
  VideoResult,
  VideoWaitOptions,
} from '../types';
import { ProviderError } from '../errors';
import { FORMAT_ASPECT, coverTarget, imageSize, prepareStillForAspect } from '../media/images';
import { probeVideo } from '../media/ffmpeg';
import { probeMp4Header } from '../media/mp4Header';
import { checkUpscaleScale } from '../local/upscale';
import { CLIP_SIZE } from '../local/clipEffects';
import { EFFECT_PROMPTS, VIDEO_PROMPT_SUFFIX, checkVideoJobRequest } from '../videoRequest';
import type { FalQueueClient, FalStatus } from './queueClient';

export interface FalPolling {
  /** Between status polls (ms): 10-30 s for video in production, about 1 s for images, milliseconds in tests. */
  pollIntervalMs: number;
  /** Longest wait for one request (ms), counted from its submission. */
  maxWaitMs: number;
}

export function dataUri(image: Buffer, mime: string): string {
  return `data:${mime};base64,${image.toString('base64')}`;
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The first file URL in a result: `{ images: [{ url }] }`, `{ image: { url } }` or `{ video: { url } }`. */
export function resultFileUrl(output: Record<string, unknown>, keys: string[]): string {
  for (const key of keys) {
    const value = output[key];
    const file = Array.isArray(value) ? record(value[0]) : record(value);
    if (file && typeof file.url === 'string' && file.url) return file.url;
  }
  throw new ProviderError('BAD_RESPONSE', `fal.ai result has no ${keys.join(' or ')} URL`);
}

export async function asGeneratedImage(data: Buffer, model: string, description?: string): Promise<GeneratedImage> {
  const info = await imageSize(data).catch((cause: unknown) => {
    throw new ProviderError('BAD_RESPONSE', `fal.ai returned a file that is not an image (${model})`, { cause });
  });
  return { image: data, mime: info.mime, width: info.width, height: info.height, model, description };
}

/** Submits, polls until COMPLETED, reads the result; cancels the request if it runs out of time. */
export async function runToCompletion(client: FalQueueClient, model: string, input: Record<string, unknown>, polling: FalPolling): Promise<Record<string, unknown>> {
  const { requestId } = await client.submit(model, input);
  try {
    await client.waitUntilCompleted(model, requestId, { pollIntervalMs: polling.pollIntervalMs, deadline: Date.now() + polling.maxWaitMs });
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'TIMEOUT') await client.cancel(model, requestId).catch(() => undefined);
    throw error;
  }
  return client.result(model, requestId);
}

/** Models that take a list of images ("image_urls") rather than one ("image_url"). */
const MULTI_IMAGE_MODELS = /nano-banana|seedream|qwen-image-edit-plus|gemini/;

/**
 * One kind of hosted image job with callbacks (the edit's or the upscale's): submitted with `fal_webhook`, looked at,
 * collected and cancelled by its job id (`fal:<submittedAt>:<requestId>:<model>`, as a clip's).
 */
class FalHostedImageJobs<R> implements HostedImageJobs<R> {
  constructor(
    private readonly client: FalQueueClient,
    private readonly model: string,
    readonly maxWaitMs: number,
    private readonly inputOf: (request: R) => Promise<Record<string, unknown>>,
    private readonly imageOf: (output: Record<string, unknown>, model: string) => Promise<GeneratedImage>,
  ) {}

  async submit(request: R, callbackUrl: string): Promise<{ jobId: string; requestId: string }> {
    const input = await this.inputOf(request);
    const submittedAt = Date.now();
    const { requestId } = await this.client.submit(this.model, input, undefined, callbackUrl);
    return { jobId: encodeFalJobId({ model: this.model, requestId, submittedAt }), requestId };
  }

  async isDone(jobId: string): Promise<boolean> {
    const job = decodeFalJobId(jobId);
    return (await this.client.status(job.model, job.requestId)).status === 'COMPLETED';
  }

  async collect(jobId: string): Promise<GeneratedImage> {
    const job = decodeFalJobId(jobId);
    return this.imageOf(await this.client.result(job.model, job.requestId), job.model);
  }

  async cancel(jobId: string): Promise<void> {
    const job = decodeFalJobId(jobId);
    await this.client.cancel(job.model, job.requestId);
  }
}

export class FalImageEditProvider implements ImageEditProvider {
  readonly hosted: HostedImageJobs<ImageEditRequest>;

  constructor(
    private readonly client: FalQueueClient,
    private readonly model: string,
    private readonly polling: FalPolling,
  ) {
    this.hosted = new FalHostedImageJobs(client, model, polling.maxWaitMs, (request) => this.inputOf(request), (output, model) => this.imageOf(output, model));
  }

  async edit(request: ImageEditRequest): Promise<GeneratedImage> {
    const output = await runToCompletion(this.client, this.model, await this.inputOf(request), this.polling);
    return this.imageOf(output, this.model);
  }

  /** The model's input: the source framed to the requested format first (the models keep the input's aspect). */
  private async inputOf(request: ImageEditRequest): Promise<Record<string, unknown>> {
    const prompt = request.prompt.trim();
    if (!prompt) throw new ProviderError('INPUT', 'The edit prompt is empty');
    const format = request.format ?? 'square';
    const source = await imageSize(request.image);
    const aspect = format === 'original' ? source.width / source.height : FORMAT_ASPECT[format];
    const size = coverTarget(source, aspect, request.quality === 'standard' ? 1024 : 2048);
    const framed = await sharp(request.image).rotate().resize(size.width, size.height, { fit: 'cover', position: 'centre', kernel: 'lanczos3' }).jpeg({ quality: 92 }).toBuffer();
    const uri = dataUri(framed, 'image/jpeg');
    return MULTI_IMAGE_MODELS.test(this.model)
      ? { prompt, image_urls: [uri], num_images: 1, output_format: 'jpeg' }
      : { prompt, image_url: uri, num_images: 1, output_format: 'jpeg' };
  }

  private async imageOf(output: Record<string, unknown>, model: string): Promise<GeneratedImage> {
    const { data } = await this.client.downloadBuffer(resultFileUrl(output, ['images', 'image']));
    return asGeneratedImage(data, model, typeof output.description === 'string' ? output.description : undefined);
  }
}

export class FalUpscaleProvider implements UpscaleProvider {
  readonly hosted: HostedImageJobs<UpscaleRequest>;

  constructor(
    private readonly client: FalQueueClient,
    private readonly model: string,
    private readonly polling: FalPolling,
  ) {
    this.hosted = new FalHostedImageJobs(client, model, polling.maxWaitMs, (request) => this.inputOf(request), (output, model) => this.imageOf(output, model));
  }

  async upscale(request: UpscaleRequest): Promise<GeneratedImage> {
    const output = await runToCompletion(this.client, this.model, await this.inputOf(request), this.polling);
    return this.imageOf(output, this.model);
  }

  private async inputOf(request: UpscaleRequest): Promise<Record<string, unknown>> {
    const scale = checkUpscaleScale(request.scale ?? 2);
    const source = await imageSize(request.image);
    return { image_url: dataUri(request.image, source.mime), scale };
  }

  private async imageOf(output: Record<string, unknown>, model: string): Promise<GeneratedImage> {
    const { data } = await this.client.downloadBuffer(resultFileUrl(output, ['image', 'images']));
    return asGeneratedImage(data, model);
  }
}

export interface FalVideoOptions extends FalPolling {
  /** Where results are downloaded to until `release`. */
  workDir: string;
  /** Typical run time, for a progress estimate when the model logs no percentage (ms). */
  expectedRunMs: number;
}

interface FalJob {
  model: string;
  requestId: string;
  submittedAt: number;
}

/**
 * Job ids are `fal:<submittedAt>:<requestId>:<model>`: everything needed to resume polling after a
 * restart, even if the configured model changed meanwhile.
 */
export function encodeFalJobId(job: FalJob): string {
  return `fal:${job.submittedAt}:${job.requestId}:${job.model}`;
}

export function decodeFalJobId(jobId: string): FalJob {
  const match = /^fal:(\d+):([^:]+):(.+)$/.exec(jobId);
  if (!match) throw new ProviderError('UNKNOWN_JOB', `"${jobId}" is not a fal video job id`);
  return { submittedAt: Number(match[1]), requestId: match[2], model: match[3] };
}

export class FalImageToVideoProvider implements ImageToVideoProvider {
  readonly pollIntervalMs: number;
  readonly maxWaitMs: number;

  constructor(
    private readonly client: FalQueueClient,
    private readonly model: string,
    private readonly options: FalVideoOptions,
  ) {
    this.pollIntervalMs = options.pollIntervalMs;
    this.maxWaitMs = options.maxWaitMs;
  }

  async submit(request: VideoJobRequest): Promise<VideoJobHandle> {
    checkVideoJobRequest(request);
    const size = CLIP_SIZE[request.aspectRatio];
    // a JPEG framed at the clip's size already (the clip activity frames it so) goes as it is, not decoded and encoded again
    const given = await imageSize(request.image).catch(() => null);
    const ready = given !== null && given.mime === 'image/jpeg' && given.width === size.width && given.height === size.height;
    const still = ready ? request.image : await prepareStillForAspect(request.image, size).catch((cause: unknown) => {
      throw new ProviderError('INPUT', `The source image could not be prepared: ${(cause as Error).message}`, { cause });
    });
    const prompt = [EFFECT_PROMPTS[request.effect], request.prompt?.trim(), VIDEO_PROMPT_SUFFIX].filter(Boolean).join('. ');
    const submittedAt = Date.now();
    const { requestId } = await this.client.submit(this.model, {
      prompt,
      image_url: dataUri(still, 'image/jpeg'),
      duration: String(Math.round(request.durationSeconds)),
      negative_prompt: 'blur, distortion, warped buildings, low quality',
    }, undefined, request.callbackUrl);
    return { jobId: encodeFalJobId({ model: this.model, requestId, submittedAt }) };
  }

  async status(jobId: string): Promise<VideoJobStatus> {
    const job = decodeFalJobId(jobId);
    const status = await this.client.status(job.model, job.requestId);
    if (status.status === 'COMPLETED') {
      if (status.error) return { state: 'failed', progress: 100, message: 'Generation failed', error: status.error };
      return { state: 'completed', progress: 100, message: 'Clip ready' };
    }
    return this.progressOf(job, status);
  }

  async wait(jobId: string, options: VideoWaitOptions = {}): Promise<VideoResult> {
    const job = decodeFalJobId(jobId);
    let best = 0;
    await this.client.waitUntilCompleted(job.model, job.requestId, {
      pollIntervalMs: this.options.pollIntervalMs,
      deadline: job.submittedAt + this.options.maxWaitMs,
      signal: options.signal,
      onStatus: async (status) => {
        if (status.status === 'COMPLETED') return;
        const progress = this.progressOf(job, status);
        best = Math.max(best, progress.progress);
        await options.onProgress?.({ ...progress, progress: best });
      },
    });
    await options.onProgress?.({ state: 'running', progress: Math.max(best, 97), message: 'Downloading the clip' });
    const output = await this.client.result(job.model, job.requestId, options.signal);
    const file = this.resultPath(job);
    await fs.mkdir(this.options.workDir, { recursive: true });
    const sizeBytes = await this.client.downloadToFile(resultFileUrl(output, ['video']), file, options.signal);
    // the MP4's own header first (no process to start); anything it cannot read is left to ffprobe
    const probe = (await probeMp4Header(file)) ?? await probeVideo(file).catch(async (cause: unknown) => {
      await fs.rm(file, { force: true });
      throw new ProviderError('BAD_RESPONSE', `fal.ai returned a file that is not a video (${job.model})`, { cause });
    });
    return {
      path: file,
      mime: 'video/mp4',
      width: probe.width,
      height: probe.height,
      durationSeconds: probe.durationSeconds,
      fps: probe.fps,
      sizeBytes,
      model: job.model,
    };
  }

  async cancel(jobId: string): Promise<void> {
    const job = decodeFalJobId(jobId);
    await this.client.cancel(job.model, job.requestId);
  }

  async release(jobId: string): Promise<void> {
    await fs.rm(this.resultPath(decodeFalJobId(jobId)), { force: true });
  }

  private resultPath(job: FalJob): string {
    return path.join(this.options.workDir, `fal-${job.requestId.replace(/[^A-Za-z0-9_-]/g, '_')}.mp4`);
  }

  /** Queue position while queued; while running, the last percentage a log line names, else elapsed time against the typical run. */
  private progressOf(job: FalJob, status: FalStatus): VideoProgress {
    if (status.status === 'IN_QUEUE') {
      const position = status.queuePosition;
      return { state: 'queued', progress: 2, message: position === undefined ? 'Queued' : `Queued (position ${position})`, queuePosition: position };
    }
    let logged: number | null = null;
    for (const log of status.logs) {
      const match = /(\d{1,3}(?:\.\d+)?)\s*%/.exec(log.message);
      if (match) logged = Math.min(100, Number(match[1]));
    }
    const estimate = logged ?? ((Date.now() - job.submittedAt) / this.options.expectedRunMs) * 100;
    const progress = Math.max(5, Math.min(95, Math.floor(estimate)));
    const last = status.logs.at(-1)?.message;
    return { state: 'running', progress, message: last ? `Generating: ${last}`.slice(0, 200) : 'Generating the clip' };
  }
}
