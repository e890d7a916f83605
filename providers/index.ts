/**
 * `createProviders(config)`: the five capabilities for `config.providerKind`, each behind its own
 * circuit breaker with the spec's defaults.
 *
 * - local: the whole call goes through the breaker (sharp work is seconds at most), except the
 *   image-to-video `wait`, a render of a minute or more whose liveness the activity's heartbeat watches.
 * - fal: every HTTP call to the queue goes through the capability's breaker, so a 10-minute video job is
 *   many short guarded calls, and the breaker sees the service's health, not the model's run time.
 * Prompt refinement and chat are rule-based for both kinds: no hosted language model is configured.
 */
import os from 'node:os';
import path from 'node:path';
import type { AppConfig } from '../config/env';
import type { ChatProvider, ImageEditProvider, ImageToVideoProvider, PromptRefiner, Providers, UpscaleProvider } from './types';
import { CircuitBreaker, type CircuitBreakerOptions } from './circuitBreaker';
import { countsAsProviderFailure } from './errors';
import { LocalImageEditProvider } from './local/imageEdit';
import { LocalUpscaleProvider } from './local/upscale';
import { RuleBasedPromptRefiner } from './local/promptRefiner';
import { RuleBasedChatProvider } from './local/chat';
import { LocalImageToVideoProvider } from './local/video';
import { FalQueueClient } from './fal/queueClient';
import { FalImageEditProvider, FalImageToVideoProvider, FalUpscaleProvider } from './fal/providers';

export * from './types';
export { ProviderError, countsAsProviderFailure } from './errors';
export { CircuitBreaker, CircuitBreakerError } from './circuitBreaker';
export type { CircuitState } from './circuitBreaker';

export type ProviderConfig = Pick<AppConfig, 'providerKind' | 'falBaseUrl' | 'falApiKey' | 'falImageEditModel' | 'falUpscaleModel' | 'falVideoModel'>;

export interface ProviderOptions {
  /** Local render jobs and downloaded hosted clips live here until released. */
  workDir?: string;
  /** Hosted video status polls (ms); 10-30 s in production. */
  videoPollIntervalMs?: number;
  /** Hosted image status polls (ms). */
  imagePollIntervalMs?: number;
  imageMaxWaitMs?: number;
  videoMaxWaitMs?: number;
  expectedVideoRunMs?: number;
  /** HTTP timeout of one fal call (ms). */
  requestTimeoutMs?: number;
  /** x264 preset of local renders. */
  videoPreset?: string;
  maxConcurrentRenders?: number;
  /** Overrides of the spec's breaker defaults (tests). */
  breaker?: Partial<CircuitBreakerOptions>;
  fetch?: typeof fetch;
}

export type CapabilityName = keyof Providers;

export interface ProviderSet extends Providers {
  kind: ProviderConfig['providerKind'];
  breakers: Record<CapabilityName, CircuitBreaker>;
}

export const DEFAULT_PROVIDER_WORK_DIR = path.join(os.tmpdir(), 'render-studio-providers');

function guardedLocal(breakers: Record<CapabilityName, CircuitBreaker>, local: {
  imageEdit: ImageEditProvider;
  upscale: UpscaleProvider;
  promptRefiner: PromptRefiner;
  imageToVideo: ImageToVideoProvider;
  chat: ChatProvider;
}): Providers {
  const { imageEdit, upscale, promptRefiner, imageToVideo, chat } = local;
  return {
    imageEdit: { edit: (request) => breakers.imageEdit.execute(() => imageEdit.edit(request)) },
    upscale: { upscale: (request) => breakers.upscale.execute(() => upscale.upscale(request)) },
    promptRefiner: { refine: (request) => breakers.promptRefiner.execute(() => promptRefiner.refine(request)) },
    chat: { reply: (request) => breakers.chat.execute(() => chat.reply(request)) },
    imageToVideo: {
      submit: (request) => breakers.imageToVideo.execute(() => imageToVideo.submit(request)),
      status: (jobId) => breakers.imageToVideo.execute(() => imageToVideo.status(jobId)),
      wait: (jobId, options) => imageToVideo.wait(jobId, options),
      cancel: (jobId) => breakers.imageToVideo.execute(() => imageToVideo.cancel(jobId)),
      release: (jobId) => imageToVideo.release(jobId),
    },
  };
}

export function createProviders(config: ProviderConfig, options: ProviderOptions = {}): ProviderSet {
  const kind = config.providerKind;
  const breakerFor = (capability: CapabilityName) =>
    new CircuitBreaker(`${kind}:${capability}`, { isFailure: countsAsProviderFailure, ...options.breaker });
  const breakers: Record<CapabilityName, CircuitBreaker> = {
    imageEdit: breakerFor('imageEdit'),
    upscale: breakerFor('upscale'),
    promptRefiner: breakerFor('promptRefiner'),
    imageToVideo: breakerFor('imageToVideo'),
    chat: breakerFor('chat'),
  };
  const workDir = options.workDir ?? DEFAULT_PROVIDER_WORK_DIR;
  const promptRefiner = new RuleBasedPromptRefiner();
  const chat = new RuleBasedChatProvider();

  if (kind === 'local') {
    const providers = guardedLocal(breakers, {
      imageEdit: new LocalImageEditProvider(),
      upscale: new LocalUpscaleProvider(),
      promptRefiner,
      chat,
      imageToVideo: new LocalImageToVideoProvider({
        workDir: path.join(workDir, 'local-video'),
        preset: options.videoPreset,
        maxConcurrentRenders: options.maxConcurrentRenders,
      }),
    });
    return { kind, breakers, ...providers };
  }

  const client = (capability: CapabilityName) =>
    new FalQueueClient({
      baseUrl: config.falBaseUrl,
      apiKey: config.falApiKey,
      requestTimeoutMs: options.requestTimeoutMs,
      fetch: options.fetch,
      guard: (call) => breakers[capability].execute(call),
    });
  const imagePolling = { pollIntervalMs: options.imagePollIntervalMs ?? 1000, maxWaitMs: options.imageMaxWaitMs ?? 5 * 60 * 1000 };
  return {
    kind,
    breakers,
    imageEdit: new FalImageEditProvider(client('imageEdit'), config.falImageEditModel, imagePolling),
    upscale: new FalUpscaleProvider(client('upscale'), config.falUpscaleModel, imagePolling),
    imageToVideo: new FalImageToVideoProvider(client('imageToVideo'), config.falVideoModel, {
      workDir: path.join(workDir, 'fal-video'),
      pollIntervalMs: options.videoPollIntervalMs ?? 15000,
      maxWaitMs: options.videoMaxWaitMs ?? 45 * 60 * 1000,
      expectedRunMs: options.expectedVideoRunMs ?? 10 * 60 * 1000,
    }),
    promptRefiner: { refine: (request) => breakers.promptRefiner.execute(() => promptRefiner.refine(request)) },
    chat: { reply: (request) => breakers.chat.execute(() => chat.reply(request)) },
  };
}
