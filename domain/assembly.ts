/**
 * Video assembly (spec 001 sections 2-9, DESIGN.md "Assembly"): the constants, the verbatim texts, the platform
 * mapping, the chat's editing config and the API's request and answer shapes. Pure: imported by the API, the
 * workflow, the activities and the front end.
 */
import { DEFAULT_BRAND_PARTS, normalizeBrandParts, type BrandPartsSetting } from './brandVideo';
import { normalizeMusicSetting, type MusicSetting } from './music';
import type { Orientation } from './orientation';
import { countText } from './plural';

/** Spec 001 section 9. */
export const MAX_ASSEMBLY_CLIPS = 5;
export const ASSEMBLY_POLL_INTERVAL_MS = 6000;
export const ASSEMBLY_POLL_MAX_ATTEMPTS = 30;
/** Spec 001 section 4: the approvals list waits this long after an assembly start before it is refreshed. */
export const APPROVALS_REFRESH_AFTER_ASSEMBLY_MS = 3000;
/** Browser storage keys of the saved clip selection start with this (spec 001 section 3). */
export const ASSEMBLY_STORAGE_PREFIX = 'rs:assembly:';
export const ASSEMBLY_FPS = 30;

/** The spec's texts, verbatim (sections 5, 6 and 8). */
export const ASSEMBLY_MSG = {
  failedToStart: 'Failed to start assembly',
  failedToLoadPreview: 'Failed to load video preview',
  failedToLoadClips: 'Failed to load video clips',
  authRequired: 'User authentication required',
  selectClip: 'Please select at least one clip to assemble',
  selectProject: 'Please select a project to save the assembled video',
  projectPermission: 'You do not have permission to use this project',
  maxClips: 'Maximum 5 clips allowed',
  typeMessage: 'Please type a message',
  deleteVideoConfirm: 'Are you sure you want to delete this video? This action cannot be undone.',
  failedToDeleteVideo: 'Failed to delete video',
} as const;

/** 'Cannot mix ... and ... clips. Please select clips of the same aspect ratio.': the selection's family first. */
export function cannotMixMessage(selected: Orientation, other: Orientation): string {
  return `Cannot mix ${selected} and ${other} clips. Please select clips of the same aspect ratio.`;
}

export const ASSEMBLY_ERROR_CODES = {
  noClips: 'NO_CLIPS',
  noProject: 'NO_PROJECT',
  tooManyClips: 'MAX_CLIPS',
  mixedOrientation: 'MIXED_ORIENTATION',
  clipNotFound: 'CLIP_NOT_FOUND',
  projectPermission: 'PROJECT_PERMISSION',
  startFailed: 'ASSEMBLY_START_FAILED',
  jobNotFound: 'ASSEMBLY_JOB_NOT_FOUND',
  renderFailed: 'ASSEMBLY_FAILED',
  clipFileMissing: 'CLIP_FILE_MISSING',
  musicFileMissing: 'MUSIC_FILE_MISSING',
  logoFileMissing: 'BRAND_LOGO_FILE_MISSING',
} as const;

/** What POST /api/video/assemble accepts as platform (spec 001 section 7). */
export const ASSEMBLY_PLATFORM_INPUTS = ['youtube', 'tiktok', 'portrait', 'landscape'] as const;
export type AssemblyPlatformInput = (typeof ASSEMBLY_PLATFORM_INPUTS)[number];
export type AssemblyPlatform = 'youtube' | 'tiktok';

/**
 * The formats one edit renders into (issue 44 item 4): each its own video and approval item. The platform's own
 * format (9:16 for tiktok, 16:9 for youtube) is the default and the only one an assembly had before.
 */
export const ASSEMBLY_FORMATS = ['9:16', '1:1', '4:5', '16:9'] as const;
export type AssemblyFormat = (typeof ASSEMBLY_FORMATS)[number];

export interface AssemblyFormatSpec {
  format: AssemblyFormat;
  width: number;
  height: number;
  /** What the format is posted as, in names told apart ("Harbour Villas · 9:16 Reels"). */
  label: string;
  /** In file and folder names, where ':' is not allowed. */
  slug: string;
  /**
   * How the clips fill the frame (Shotstack's `fit`): the platform formats keep the whole picture ('contain', as
   * before formats); square and 4:5 fill the frame ('crop', Shotstack's default), cutting the least off either
   * orientation.
   */
  fit: 'contain' | 'crop';
}

export const ASSEMBLY_FORMAT_SPECS: Record<AssemblyFormat, AssemblyFormatSpec> = {
  '9:16': { format: '9:16', width: 1080, height: 1920, label: 'Reels', slug: '9x16', fit: 'contain' },
  '1:1': { format: '1:1', width: 1080, height: 1080, label: 'Square', slug: '1x1', fit: 'crop' },
  '4:5': { format: '4:5', width: 1080, height: 1350, label: 'Feed', slug: '4x5', fit: 'crop' },
  '16:9': { format: '16:9', width: 1920, height: 1080, label: 'YouTube', slug: '16x9', fit: 'contain' },
};

export function isAssemblyFormat(value: unknown): value is AssemblyFormat {
  return typeof value === 'string' && (ASSEMBLY_FORMATS as readonly string[]).includes(value);
}

/** The platform's own format: the one an assembly renders when no formats are asked for. */
export function platformFormat(platform: AssemblyPlatform): AssemblyFormat {
  return platform === 'tiktok' ? '9:16' : '16:9';
}

export const ASSEMBLY_FORMATS_MESSAGE = 'formats must be one or more of 9:16, 1:1, 4:5 and 16:9';

/**
 * The formats an assembly renders, in the picker's order, each once: the asked ones, or the platform's own when none
 * are asked for. Null when a value is not one of the four (the caller answers 400).
 */
export function assemblyFormatsFor(platform: AssemblyPlatform, asked: readonly unknown[] | null | undefined): AssemblyFormat[] | null {
  if (!asked || asked.length === 0) return [platformFormat(platform)];
  if (!asked.every(isAssemblyFormat)) return null;
  return ASSEMBLY_FORMATS.filter((format) => asked.includes(format));
}

/** The name an approval item of one format of several gets: "Harbour Villas · 9:16 Reels (3 clips).mp4". */
export function assemblyFormatFileName(projectName: string, format: AssemblyFormat, clipCount: number): string {
  const base = projectName.replace(/[^\p{L}\p{N} ._-]+/gu, ' ').replace(/\s+/g, ' ').trim().slice(0, 80) || 'Video';
  return `${base} · ${format} ${ASSEMBLY_FORMAT_SPECS[format].label} (${countText(clipCount, 'clip')}).mp4`;
}

export interface AssemblyOutput {
  platform: AssemblyPlatform;
  aspectRatio: '16:9' | '9:16';
  width: number;
  height: number;
}

/** Spec 001 section 9: 9:16 gives tiktok (1080x1920), otherwise youtube (1920x1080). */
export const ASSEMBLY_OUTPUTS: Record<AssemblyPlatform, AssemblyOutput> = {
  youtube: { platform: 'youtube', aspectRatio: '16:9', width: 1920, height: 1080 },
  tiktok: { platform: 'tiktok', aspectRatio: '9:16', width: 1080, height: 1920 },
};

export function platformForAspect(aspectRatio: string | null | undefined): AssemblyPlatform {
  return aspectRatio?.trim() === '9:16' ? 'tiktok' : 'youtube';
}

export function platformForOrientation(orientation: Orientation): AssemblyPlatform {
  return orientation === 'portrait' ? 'tiktok' : 'youtube';
}

/** youtube, tiktok, portrait or landscape (any case) to the output platform; null for anything else. */
export function parseAssemblyPlatform(value: string): AssemblyPlatform | null {
  switch (value.trim().toLowerCase()) {
    case 'youtube':
    case 'landscape':
      return 'youtube';
    case 'tiktok':
    case 'portrait':
      return 'tiktok';
    default:
      return null;
  }
}

/** The clips of an assembly must be of the orientation its output is (a portrait selection renders for tiktok). */
export function orientationOfPlatform(platform: AssemblyPlatform): Orientation {
  return platform === 'tiktok' ? 'portrait' : 'landscape';
}

// ---------------------------------------------------------------------------------------------------------------
// The chat's editing config

/** Transition names as Shotstack's Edit API spells them; each maps to one ffmpeg xfade transition. */
export const TRANSITION_STYLES = ['fade', 'dissolve', 'wipeLeft', 'wipeRight', 'slideLeft', 'slideRight', 'slideUp', 'slideDown', 'zoom', 'circle'] as const;
export type TransitionStyle = (typeof TRANSITION_STYLES)[number];

export const XFADE_TRANSITION: Record<TransitionStyle, string> = {
  fade: 'fade',
  dissolve: 'dissolve',
  wipeLeft: 'wipeleft',
  wipeRight: 'wiperight',
  slideLeft: 'slideleft',
  slideRight: 'slideright',
  slideUp: 'slideup',
  slideDown: 'slidedown',
  zoom: 'zoomin',
  circle: 'circleopen',
};

export const PACINGS = ['calm', 'balanced', 'energetic'] as const;
export type Pacing = (typeof PACINGS)[number];

/** Per pacing: how long a transition overlaps two clips, and how long a clip may play at most (null: all of it). */
export const PACING_RULES: Record<Pacing, { transitionSeconds: number; maxClipSeconds: number | null }> = {
  calm: { transitionSeconds: 1, maxClipSeconds: null },
  balanced: { transitionSeconds: 0.5, maxClipSeconds: null },
  energetic: { transitionSeconds: 0.25, maxClipSeconds: 3 },
};

export const CAPTION_POSITIONS = ['bottom', 'center', 'top'] as const;
export type CaptionPosition = (typeof CAPTION_POSITIONS)[number];

/** How the assembly is cut: what the chat decides, what the dry-run shows and the worker renders. */
export interface EditingConfig {
  transition: TransitionStyle;
  pacing: Pacing;
  /** Overlap of two clips in seconds (the pacing's unless the chat or the editor set one). */
  transition_duration: number;
  /** Longest a clip plays, seconds; null plays each clip whole. */
  max_clip_seconds: number | null;
  /** One caption per clip, in clip order; empty: no captions are burnt in. */
  captions: string[];
  caption_position: CaptionPosition;
  /**
   * The workspace's music track the video plays (domain/music.ts), or null: silent, as before music existed. Configs
   * stored before then have no such key and read as null.
   */
  music: MusicSetting | null;
  /**
   * Which of the workspace's brand parts the assembly uses (domain/brandVideo.ts); all on by default. Configs stored
   * before brand parts have no such key and read as the default.
   */
  brand: BrandPartsSetting;
  /**
   * The formats the next assembly renders (the Formats picker and the chat keep them; each its own video), or null:
   * the platform's own. Configs stored before formats have no such key and read as null.
   */
  formats: AssemblyFormat[] | null;
  /** Where the config came from: the default, or the chat. */
  source: 'default' | 'chat';
}

export const DEFAULT_EDITING_CONFIG: EditingConfig = {
  transition: 'fade',
  pacing: 'balanced',
  transition_duration: PACING_RULES.balanced.transitionSeconds,
  max_clip_seconds: null,
  captions: [],
  caption_position: 'bottom',
  music: null,
  brand: DEFAULT_BRAND_PARTS,
  formats: null,
  source: 'default',
};

export const MAX_TRANSITION_SECONDS = 2;
export const MIN_TRANSITION_SECONDS = 0.1;
export const MAX_CAPTION_LENGTH = 80;

/** Accepts Shotstack's names and ffmpeg's (wipeleft, zoomin ...), any case; null for anything else. */
export function parseTransitionStyle(value: unknown): TransitionStyle | null {
  if (typeof value !== 'string') return null;
  const wanted = value.trim().toLowerCase().replace(/[\s_-]+/g, '');
  for (const style of TRANSITION_STYLES) {
    if (style.toLowerCase() === wanted || XFADE_TRANSITION[style] === wanted) return style;
  }
  if (wanted === 'crossfade' || wanted === 'cut') return 'fade';
  return null;
}

function finiteNumber(value: unknown): number | null {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

/** A caption as it may be burnt in: one line, printable, at most MAX_CAPTION_LENGTH characters. */
export function cleanCaption(value: unknown): string {
  if (typeof value !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  const line = value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return line.length > MAX_CAPTION_LENGTH ? `${line.slice(0, MAX_CAPTION_LENGTH - 1).trimEnd()}…` : line;
}

/**
 * Formats as an editing config keeps them: the known ones in the picker's order, each once; null stays null (the
 * platform's own). Anything else, an empty list included, is `fallback`.
 */
export function normalizeFormatList(value: unknown, fallback: AssemblyFormat[] | null): AssemblyFormat[] | null {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || !value.every(isAssemblyFormat)) return fallback;
  return ASSEMBLY_FORMATS.filter((format) => value.includes(format));
}

/**
 * Any editing config (a chat provider's JSON, a stored row, a request) made valid: known transition and pacing,
 * durations within bounds, captions cleaned. Unknown or missing parts take the pacing's or the default's value.
 */
export function normalizeEditingConfig(input: unknown, fallback: EditingConfig = DEFAULT_EDITING_CONFIG): EditingConfig {
  const raw = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  // a pacing given here brings its own transition length and clip cap, unless those are given too
  const pacingGiven = (PACINGS as readonly string[]).includes(raw.pacing as string);
  const pacing = pacingGiven ? (raw.pacing as Pacing) : fallback.pacing;
  const rules = PACING_RULES[pacing];
  const transition = parseTransitionStyle(raw.transition) ?? fallback.transition;
  const duration = finiteNumber(raw.transition_duration);
  const transitionDuration =
    duration === null ? (pacingGiven ? rules.transitionSeconds : fallback.transition_duration) : Math.min(MAX_TRANSITION_SECONDS, Math.max(MIN_TRANSITION_SECONDS, duration));
  const maxClipGiven = finiteNumber(raw.max_clip_seconds);
  let maxClip: number | null = pacingGiven ? rules.maxClipSeconds : fallback.max_clip_seconds;
  if (raw.max_clip_seconds === null) maxClip = null;
  else if (maxClipGiven !== null) maxClip = Math.max(1, maxClipGiven);
  const captions = Array.isArray(raw.captions) ? raw.captions.map(cleanCaption).slice(0, MAX_ASSEMBLY_CLIPS) : fallback.captions;
  const position = (CAPTION_POSITIONS as readonly string[]).includes(raw.caption_position as string) ? (raw.caption_position as CaptionPosition) : fallback.caption_position;
  const source = raw.source === 'chat' || raw.source === 'default' ? raw.source : fallback.source;
  const music = 'music' in raw ? normalizeMusicSetting(raw.music, fallback.music ?? null) : (fallback.music ?? null);
  const brand = normalizeBrandParts(raw.brand, fallback.brand ?? DEFAULT_BRAND_PARTS);
  const formats = 'formats' in raw ? normalizeFormatList(raw.formats, fallback.formats ?? null) : (fallback.formats ?? null);
  return {
    transition,
    pacing,
    transition_duration: Math.round(transitionDuration * 1000) / 1000,
    max_clip_seconds: maxClip,
    captions: captions.every((c) => c === '') ? [] : captions,
    caption_position: position,
    music,
    brand,
    formats,
    source,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The chat (GET/POST /api/projects/{id}/aesthetic)

export const CHAT_SYNC_CLIPS = '__SYNC_CLIPS__';
export const CHAT_CLEAR_CONVERSATION = '__CLEAR_CONVERSATION__';
export const CHAT_MESSAGE_MAX = 2000;
export const CHAT_HISTORY_MAX = 100;

export type EnergyLevel = 'calm' | 'balanced' | 'energetic';

export interface ChatHistoryMessage {
  role: 'user' | 'assistant';
  content: string;
  timestamp: string;
}

export interface ClipSelection {
  selectedIds: string[];
  order: string[];
}

/** Spec 001 section 3, "Aesthetic preferences". */
export interface AestheticPreferences {
  aesthetic: string | null;
  energy_level: EnergyLevel | null;
  copy_style: string | null;
  generated_texts: string[];
  clip_selection: ClipSelection;
}

/** Spec 001 section 3, "Chat analysis". */
export interface ChatAnalysis {
  ready_to_create: boolean;
  confidence_score: number;
  missing_info: string[];
}

export interface WorkflowAnalysis {
  stage: 'selecting_clips' | 'gathering_preferences' | 'ready';
  next_step: string;
  clip_count: number;
  orientation: Orientation | null;
  platform: AssemblyPlatform | null;
}

export interface ClipSuggestion {
  clip_id: string;
  position: number;
  reason: string;
}

/** The chat state: GET answers it, POST answers it after the message (with error null). */
export interface AestheticChatState {
  chat_history: ChatHistoryMessage[];
  preferences: AestheticPreferences;
  editing_config: EditingConfig;
  analysis: ChatAnalysis;
  workflow_analysis: WorkflowAnalysis;
  clip_suggestions: ClipSuggestion[];
}

export interface AestheticChatAnswer extends AestheticChatState {
  success: true;
  error: null;
}

export const EMPTY_PREFERENCES: AestheticPreferences = {
  aesthetic: null,
  energy_level: null,
  copy_style: null,
  generated_texts: [],
  clip_selection: { selectedIds: [], order: [] },
};

// ---------------------------------------------------------------------------------------------------------------
// Clips, jobs and answers

/** Spec 001 section 3, "Clip (for assembly)", with the derived orientation. Links are signed. */
export interface AssemblyClip {
  id: string;
  project_id: string;
  project_name: string;
  file_url: string;
  file_name: string;
  duration: number;
  camera_movement: string | null;
  custom_name: string | null;
  created_at: string;
  thumbnail_url: string | null;
  aspect_ratio: string | null;
  analysis_data: Record<string, unknown>;
  orientation: Orientation;
}

export type AssemblyJobStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';
export const ASSEMBLY_ACTIVE_STATUSES: readonly AssemblyJobStatus[] = ['pending', 'processing'];

export function isFinalAssemblyStatus(status: AssemblyJobStatus): boolean {
  return !ASSEMBLY_ACTIVE_STATUSES.includes(status);
}

export interface AssemblyResultSummary {
  approvalId: string;
  approvalWorkflowId: string;
  compiledVideoId: string;
  fileName: string;
  durationSeconds: number;
  fileSize: number;
  width: number;
  height: number;
  platform: AssemblyPlatform;
  aspectRatio: AssemblyFormat;
  /** An assembly of several formats: each format's video and approval item, the first one also above. */
  formats?: AssemblyFormatResult[];
}

export type AssemblyFormatResult = Omit<AssemblyResultSummary, 'formats'>;

/** GET /api/video/assemble?jobId= answers `{ success, job }` with this. */
export interface AssemblyJobView {
  jobId: string;
  status: AssemblyJobStatus;
  progress: number;
  message: string;
  error: string | null;
  projectId: string;
  platform: AssemblyPlatform;
  clipIds: string[];
  result: AssemblyResultSummary | null;
  createdAt: string;
}

export const ASSEMBLY_PROGRESS = {
  admitted: 5,
  validated: 10,
  renderStart: 15,
  renderEnd: 80,
  stored: 85,
  finished: 95,
  completed: 100,
} as const;

export const ASSEMBLY_MESSAGES = {
  queued: 'Waiting to start',
  validating: 'Checking the clips',
  rendering: 'Joining the clips',
  finishing: 'Making the thumbnail and preview',
  approval: 'Sending it for approval',
  completed: 'Ready for approval',
  failed: 'Assembly failed',
  cancelled: 'Assembly cancelled',
} as const;

/** Render progress (fraction 0-1 of the ffmpeg run) mapped into the render step's range. */
export function assemblyRenderProgress(fraction: number): number {
  const f = Math.min(1, Math.max(0, fraction));
  return Math.round(ASSEMBLY_PROGRESS.renderStart + f * (ASSEMBLY_PROGRESS.renderEnd - ASSEMBLY_PROGRESS.renderStart));
}

export function assemblyFileName(projectName: string, platform: AssemblyPlatform, clipCount: number): string {
  const base = projectName.replace(/[^\p{L}\p{N} ._-]+/gu, ' ').replace(/\s+/g, ' ').trim().slice(0, 80) || 'Video';
  return `${base} - ${platform === 'tiktok' ? 'TikTok 9x16' : 'YouTube 16x9'} (${countText(clipCount, 'clip')}).mp4`;
}

export function assemblyWorkflowId(jobId: string): string {
  return `assembly-${jobId}`;
}
