/**
 * `createProviders(config)`: the five capabilities for `config.providerKind`, each behind its own
 * circuit breaker with the spec's defaults.
 *
 * - local: the whole call goes through the breaker (sharp work is seconds at most), except the
 *   image-to-video `wait`, a render of a minute or more whose liveness the activity's heartbeat watches. The draft
 *   models' breaker is per caller (`draftModelBreakers`, keyed by the request's user): their work runs on this
 *   worker's CPU, so a failure says more about the input than about the worker, and one user's files must not
 *   stop everyone's jobs.
 * - fal: every HTTP call to the queue goes through the capability's breaker, so a 10-minute video job is
 *   many short guarded calls, and the breaker sees the service's health, not the model's run time.
 * Prompt refinement is rule-based for both kinds; Enhance Renders' vision prompt uses fal's any-llm/vision when
 * hosted (FAL_VISION_MODEL, FAL_VISION_LLM). The chat is chosen on its own (CHAT_PROVIDER): rule-based, or an
 * OpenAI-compatible chat-completions service; `createChatProvider` gives it alone to the API.
 */
import os from 'node:os';
import path from 'node:path';
import type { AppConfig } from '../config/env';
import type { ChatProvider, DraftModelProvider, ImageEditProvider, ImageToVideoProvider, PromptRefiner, Providers, UpscaleProvider, VisionPromptProvider } from './types';
import { CircuitBreaker, type CircuitBreakerOptions } from './circuitBreaker';
import { countsAsProviderFailure } from './errors';
import { KeyedCircuitBreakers } from './keyedBreakers';
import { LocalImageEditProvider } from './local/imageEdit';
import { LocalUpscaleProvider } from './local/upscale';
import { RuleBasedPromptRefiner } from './local/promptRefiner';
import { RuleBasedChatProvider } from './local/chat';
import { LocalImageToVideoProvider } from './local/video';
import { FalQueueClient } from './fal/queueClient';
import { FalImageEditProvider, FalImageToVideoProvider, FalUpscaleProvider } from './fal/providers';
import { LocalDraftModelProvider } from './local/draftModels';
import { RuleBasedVisionPromptProvider } from './local/visionPrompt';
import { FalDraftModelProvider, FalVisionPromptProvider } from './fal/draftModels';
import { OpenAiChatProvider } from './openai/chat';

export * from './types';
export { ProviderError, countsAsProviderFailure } from './errors';
export { CircuitBreaker, CircuitBreakerError } from './circuitBreaker';
export { KeyedCircuitBreakers } from './keyedBreakers';
export type { CircuitState } from './circuitBreaker';

export type ProviderConfig = Pick<AppConfig, 'providerKind' | 'falBaseUrl' | 'falApiKey' | 'falImageEditModel' | 'falUpscaleModel' | 'falVideoModel'> &
  Partial<Pick<AppConfig, 'falVisionModel' | 'falVisionLlm'>> &
  Partial<ChatProviderConfig>;

export type ChatProviderConfig = Pick<AppConfig, 'chatProvider' | 'chatBaseUrl' | 'chatApiKey' | 'chatModel'>;

/** The assembly chat for CHAT_PROVIDER, behind its own circuit breaker. */
export function createChatProvider(
  config: Partial<ChatProviderConfig>,
  options: { breaker?: Partial<CircuitBreakerOptions>; fetch?: typeof fetch; timeoutMs?: number } = {},
): ChatProvider & { breaker: CircuitBreaker } {
  const kind = config.chatProvider ?? 'local';
  const breaker = new CircuitBreaker(`${kind}:chat`, { isFailure: countsAsProviderFailure, ...options.breaker });
  const chat: ChatProvider =
    kind === 'openai'
      ? new OpenAiChatProvider({ baseUrl: config.chatBaseUrl ?? 'https://api.openai.com/v1', apiKey: config.chatApiKey ?? '', model: config.chatModel ?? 'gpt-4o-mini', fetch: options.fetch, timeoutMs: options.timeoutMs })
      : new RuleBasedChatProvider();
  return { breaker, reply: (request) => breaker.execute(() => chat.reply(request)) };
}

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
  /**
   * The local image edit and upscale to use (each still behind its breaker), e.g. the worker's image thread
   * (activities/imageThread.ts); unset, they run on the caller's thread.
   */
  localImage?: { imageEdit: ImageEditProvider; upscale: UpscaleProvider };
  /** Overrides of the spec's breaker defaults (tests). */
  breaker?: Partial<CircuitBreakerOptions>;
  /** Longest side the local draft models work at (px; providers/local/draftModels.ts DRAFT_MODEL_WORK_MAX_SIDE). */
  draftWorkMaxSide?: number;
  fetch?: typeof fetch;
}

export type CapabilityName = keyof Providers;

export interface ProviderSet extends Providers {
  kind: ProviderConfig['providerKind'];
  /** One per capability; the local draft models use `draftModelBreakers` instead (a call without a caller uses `breakers.draftModels`). */
  breakers: Record<CapabilityName, CircuitBreaker>;
  /** Local kind: the draft models' breaker of each caller. */
  draftModelBreakers?: KeyedCircuitBreakers;
}

export const DEFAULT_PROVIDER_WORK_DIR = path.join(os.tmpdir(), 'render-studio-providers');

function guardedLocal(breakers: Record<CapabilityName, CircuitBreaker>, draftModelBreakers: KeyedCircuitBreakers, local: {
  imageEdit: ImageEditProvider;
  upscale: UpscaleProvider;
  promptRefiner: PromptRefiner;
  imageToVideo: ImageToVideoProvider;
  chat: ChatProvider;
  draftModels: DraftModelProvider;
  visionPrompt: VisionPromptProvider;
}): Providers {
  const { imageEdit, upscale, promptRefiner, imageToVideo, chat, draftModels, visionPrompt } = local;
  return {
    draftModels: {
      run: (request) => (request.caller ? draftModelBreakers.for(request.caller) : breakers.draftModels).execute(() => draftModels.run(request)),
    },
    visionPrompt: { enhance: (request) => breakers.visionPrompt.execute(() => visionPrompt.enhance(request)) },
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
    draftModels: breakerFor('draftModels'),
    visionPrompt: breakerFor('visionPrompt'),
  };
  const workDir = options.workDir ?? DEFAULT_PROVIDER_WORK_DIR;
  const promptRefiner = new RuleBasedPromptRefiner();
  const chat: ChatProvider =
    config.chatProvider === 'openai'
      ? new OpenAiChatProvider({ baseUrl: config.chatBaseUrl ?? 'https://api.openai.com/v1', apiKey: config.chatApiKey ?? '', model: config.chatModel ?? 'gpt-4o-mini', fetch: options.fetch })
      : new RuleBasedChatProvider();

  if (kind === 'local') {
    const draftModelBreakers = new KeyedCircuitBreakers(`${kind}:draftModels`, { isFailure: countsAsProviderFailure, ...options.breaker });
    const providers = guardedLocal(breakers, draftModelBreakers, {
      imageEdit: options.localImage?.imageEdit ?? new LocalImageEditProvider(),
      upscale: options.localImage?.upscale ?? new LocalUpscaleProvider(),
      promptRefiner,
      chat,
      draftModels: new LocalDraftModelProvider({ workMaxSide: options.draftWorkMaxSide }),
      visionPrompt: new RuleBasedVisionPromptProvider(),
      imageToVideo: new LocalImageToVideoProvider({
        workDir: path.join(workDir, 'local-video'),
        preset: options.videoPreset,
        maxConcurrentRenders: options.maxConcurrentRenders,
      }),
    });
    return { kind, breakers, draftModelBreakers, ...providers };
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
    draftModels: new FalDraftModelProvider(client('draftModels'), imagePolling),
    visionPrompt: new FalVisionPromptProvider(
      client('visionPrompt'),
      config.falVisionModel ?? 'fal-ai/any-llm/vision',
      config.falVisionLlm ?? 'google/gemini-flash-1.5',
      imagePolling,
    ),
  };
}
