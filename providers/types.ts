/**
 * One small interface per AI capability (DESIGN.md "AI providers"). Activities depend on these
 * types only; `createProviders` (providers/index.ts) picks the implementation from configuration.
 * Nothing here imports the database or Temporal.
 */
import type { Platform, VideoEffect } from '../domain/constants';
import type { BrandPartsSetting } from '../domain/brandVideo';
import type { AssemblyFormat } from '../domain/assembly';

/** Output framing of an image edit. The spec's default is 'square'; 'original' keeps the source's aspect. */
export type ImageFormat = 'square' | 'landscape' | 'portrait' | 'original';
/** 'hd' (the spec's default) renders up to 1024 px on the long side, 'standard' up to 768 px; the upscale step doubles it. */
export type ImageQuality = 'hd' | 'standard';
export type ClipAspectRatio = '16:9' | '9:16' | '1:1';

export interface GeneratedImage {
  image: Buffer;
  mime: 'image/jpeg' | 'image/png' | 'image/webp';
  width: number;
  height: number;
  /** Which model (or local pipeline) made it, for the job record. */
  model: string;
  /** Free text some hosted models return (e.g. Nano Banana's description); the local pipeline names what it applied. */
  description?: string;
}

export interface ImageEditRequest {
  image: Buffer;
  prompt: string;
  format?: ImageFormat;
  quality?: ImageQuality;
  /** Longest side of the local result instead of the quality's (drafts keep their size); hosted models decide their own. */
  maxSide?: number;
}

/**
 * A hosted image job submitted with a callback (fal's `fal_webhook`): nobody waits inside a call; the provider calls
 * `callbackUrl` when the job ends, and the caller then collects the result. Job ids are self-contained (as
 * VideoJobHandle's): a job id is enough to look at, collect or cancel the job after a restart.
 */
export interface HostedImageJobs<R> {
  /** Longest wait for one job (ms), counted from its submission. */
  readonly maxWaitMs: number;
  submit(request: R, callbackUrl: string): Promise<{ jobId: string; requestId: string }>;
  /** true once the job has ended (completed or failed): `collect` then has its outcome. */
  isDone(jobId: string): Promise<boolean>;
  /** The ended job's image; a job the model failed throws its ProviderError. */
  collect(jobId: string): Promise<GeneratedImage>;
  cancel(jobId: string): Promise<void>;
}

export interface ImageEditProvider {
  edit(request: ImageEditRequest): Promise<GeneratedImage>;
  /** A hosted provider's jobs with callbacks; the local provider has none. */
  hosted?: HostedImageJobs<ImageEditRequest>;
}

export interface UpscaleRequest {
  image: Buffer;
  /** Integer factor, default 2 (the spec's upscaleScale). */
  scale?: number;
}

export interface UpscaleProvider {
  upscale(request: UpscaleRequest): Promise<GeneratedImage>;
  /** A hosted provider's jobs with callbacks; the local provider has none. */
  hosted?: HostedImageJobs<UpscaleRequest>;
}

export interface PromptRefinementRequest {
  prompt: string;
  imageDescription?: string;
}

export interface PromptRefinement {
  originalPrompt: string;
  refinedPrompt: string;
  refinementMethod: 'rule-based';
}

export interface PromptRefiner {
  refine(request: PromptRefinementRequest): Promise<PromptRefinement>;
}

export interface VideoJobRequest {
  image: Buffer;
  effect: VideoEffect;
  platform: Platform;
  aspectRatio: ClipAspectRatio;
  durationSeconds: number;
  /** Extra wording for hosted models; the effect decides the motion either way. */
  prompt?: string;
  /** A hosted provider calls this URL when the job ends (fal's `fal_webhook`); the local one has nothing to call. */
  callbackUrl?: string;
}

/**
 * The provider's own id for a submitted job. It is opaque to callers but self-contained: keep it in
 * the workflow state after `submit`, and a retried or rescheduled activity resumes with `wait(jobId)`
 * instead of submitting (and paying) again.
 */
export interface VideoJobHandle {
  jobId: string;
}

export type VideoJobStatus =
  | { state: 'queued'; progress: number; message: string; queuePosition?: number }
  | { state: 'running'; progress: number; message: string }
  | { state: 'completed'; progress: 100; message: string }
  | { state: 'failed'; progress: number; message: string; error: string }
  | { state: 'cancelled'; progress: number; message: string };

/** What `wait` reports while the job runs: progress 0-100 and a short message for the UI. */
export interface VideoProgress {
  state: 'queued' | 'running';
  progress: number;
  message: string;
  queuePosition?: number;
}

export interface VideoWaitOptions {
  /** Called on every poll (hosted) or progress line (local): the natural place for an activity heartbeat. */
  onProgress?: (progress: VideoProgress) => void | Promise<void>;
  /** Stops waiting (activity cancellation). A local render in this process is stopped too; a hosted job is left running, use `cancel`. */
  signal?: AbortSignal;
}

export interface VideoResult {
  /** A local MP4 file owned by the provider until `release(jobId)`; copy it to storage, then release. */
  path: string;
  mime: 'video/mp4';
  width: number;
  height: number;
  durationSeconds: number;
  fps: number;
  sizeBytes: number;
  model: string;
  /** Media work done for this job in this process (local renders: ffmpeg's own CPU time). */
  stats?: { wallMs: number; encoderUserSeconds?: number; encoderSystemSeconds?: number };
}

export interface ImageToVideoProvider {
  /**
   * Hosted providers only: how often to look at a submitted job (ms). The clip workflow then waits with a timer
   * between one-look activities (`status`) and calls `wait` once the job is done, so a waiting clip holds no activity
   * slot; without it (the local provider renders inside `wait`) the workflow waits inside `wait`.
   */
  readonly pollIntervalMs?: number;
  /** With `pollIntervalMs`: the longest a job may take from its submission (ms), after which `wait` gives up. */
  readonly maxWaitMs?: number;
  /** Starts a job and returns its handle. Cheap for the local provider, paid for hosted ones: call once per clip. */
  submit(request: VideoJobRequest): Promise<VideoJobHandle>;
  /** One look at the job, without waiting. */
  status(jobId: string): Promise<VideoJobStatus>;
  /** Follows the job to its end and returns the clip file. Safe to call again after a crash: it resumes. */
  wait(jobId: string, options?: VideoWaitOptions): Promise<VideoResult>;
  /** Asks the provider to stop the job. Idempotent; a job already finished stays finished. */
  cancel(jobId: string): Promise<void>;
  /** Deletes the provider's local files for the job (after the caller stored the result). */
  release(jobId: string): Promise<void>;
}

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** What the chat knows of each selected clip, in the selection's order. */
export interface ChatClipFacts {
  id: string;
  name: string;
  project_name: string;
  camera_movement: string | null;
  duration: number;
  orientation: 'portrait' | 'landscape';
}

export interface ChatRequest {
  message: string;
  history: ChatMessage[];
  selectedClipCount: number;
  aspectRatio?: string;
  /** The selected clips (when known), in order. */
  clips?: ChatClipFacts[];
  /** What the conversation settled so far. */
  preferences?: ChatPreferences;
  projectName?: string;
  /** The workspace's music tracks the chat may choose from (newest first). */
  musicTracks?: ChatMusicTrack[];
  /** The music the edit plays now; null or absent: none. */
  music?: ChatMusic | null;
  /** The workspace's brand kit as the chat may speak of it; null or absent: the workspace has none. */
  brandKit?: ChatBrandKit | null;
  /** The assembly's brand parts now (domain/brandVideo.ts); absent: the defaults. */
  brand?: BrandPartsSetting;
  /** The formats the assembly renders now (domain/assembly.ts), in the picker's order; absent or empty: not known yet. */
  formats?: AssemblyFormat[];
  /** The selection's platform format (9:16 for portrait clips, 16:9 for landscape); null or absent: no clips yet. */
  ownFormat?: AssemblyFormat | null;
}

/** What the chat knows of the workspace's brand kit: whether it has a logo, and its end card's lines. */
export interface ChatBrandKit {
  hasLogo: boolean;
  company: string;
  phone: string;
  website: string;
  callToAction: string;
}

export interface ChatMusicTrack {
  id: string;
  name: string;
  duration: number;
}

/** Music as the chat reads and proposes it (domain/music.ts MusicSetting, normalized by the caller). */
export interface ChatMusic {
  track_id: string;
  offset_seconds?: number;
  volume?: number;
  fade_in_seconds?: number;
  fade_out_seconds?: number;
}

export interface ChatPreferences {
  aesthetic?: string;
  energy_level?: 'calm' | 'balanced' | 'energetic';
  copy_style?: string;
  /** One caption per clip, in clip order (none when the copy style is 'no text'). */
  generated_texts?: string[];
}

/** The cut the assistant proposes (normalized by domain/assembly.ts normalizeEditingConfig). */
export interface ChatEditingHints {
  transition?: string;
  pacing?: string;
  transition_duration?: number;
  max_clip_seconds?: number | null;
  caption_position?: string;
  /** The music to play ('none': none); absent: as it is. A track id must be one of the request's musicTracks. */
  music?: ChatMusic | 'none';
  /** The brand parts to change (normalized over the assembly's own by the caller); absent: as they are. */
  brand?: Partial<BrandPartsSetting>;
  /** Every format the assembly is to render from now on (not only the added ones); absent: as they are. */
  formats?: AssemblyFormat[];
}

export interface ChatReply {
  reply: string;
  preferences: ChatPreferences;
  analysis: { ready_to_create: boolean; confidence_score: number; missing_info: string[] };
  editing?: ChatEditingHints;
  /** Suggested play order of the selected clips (ids), with a reason per clip. */
  clip_order?: Array<{ clip_id: string; reason: string }>;
}

/** The assembly chat's assistant (spec 001: aesthetic chat with preferences and analysis). */
export interface ChatProvider {
  reply(request: ChatRequest): Promise<ChatReply>;
}

/**
 * Enhance Renders' model runs (spec 001 section 7): one call per draft image. `mode` says what kind of work it is,
 * `model` the hosted model's id (the local provider does the same kind of work with sharp).
 */
export type DraftModelMode = 'edit_render' | 'style_transfer' | 'style_sync' | 'basic_upscale' | 'finish_upscale' | 'render_enhance';

export interface DraftModelRequest {
  mode: DraftModelMode;
  model: string;
  image: Buffer;
  /** The instruction (edits, style transfer, render_enhance's fixed one); none for upscales. */
  prompt?: string | null;
  /** Reference images: the look to take (attachments, or Sync Images' pinned image). */
  references: Buffer[];
  /** Upscale factor of the upscale modes. */
  scale?: number;
  /** Who asks (the user id): a local model's breaker is this caller's own, so their inputs cannot trip it for others. */
  caller?: string;
}

export interface DraftModelProvider {
  run(request: DraftModelRequest): Promise<GeneratedImage>;
}

/** POST /api/ai-enhance-prompt/vision: a prompt rewritten with what the images show. */
export interface VisionPromptRequest {
  mode: 'attach' | 'style_sync';
  prompt: string;
  images: Buffer[];
  references: Buffer[];
}

export interface VisionPromptResult {
  enhancedPrompt: string;
  /** 'rule-based' locally, else the hosted model's id. */
  method: string;
}

export interface VisionPromptProvider {
  enhance(request: VisionPromptRequest): Promise<VisionPromptResult>;
}

export interface Providers {
  imageEdit: ImageEditProvider;
  upscale: UpscaleProvider;
  promptRefiner: PromptRefiner;
  imageToVideo: ImageToVideoProvider;
  chat: ChatProvider;
  draftModels: DraftModelProvider;
  visionPrompt: VisionPromptProvider;
}
