/**
 * Music (issue 44 item 3, DESIGN.md "Brand kit and video"): a workspace keeps audio tracks, and an assembly may play
 * one under its video with a start offset, a volume and fades, trimmed to the video's length and loudness-normalised
 * (EBU R128). Pure rules shared by the API, the chat, the timeline and the front end: the limits, the texts, the
 * editing config's music part and how it reads in words.
 */

/** Largest track accepted (bytes): a bigger one is refused with 413 and nothing is stored. */
export const MUSIC_MAX_BYTES = 20 * 1024 * 1024;
/** Longest track accepted (seconds): ten minutes. */
export const MUSIC_MAX_SECONDS = 600;
export const MUSIC_NAME_MAX_LENGTH = 100;

/** The formats a track may be in, told by probing its content (never by its name), and the extension it is stored with. */
export const MUSIC_FORMATS = ['mp3', 'wav', 'm4a', 'aac', 'flac'] as const;
export type MusicFormat = (typeof MUSIC_FORMATS)[number];
export const MUSIC_MIME: Record<MusicFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  flac: 'audio/flac',
};
/** What the file picker offers (the server decides by content). */
export const MUSIC_ACCEPT = '.mp3,.wav,.m4a,.aac,.flac,audio/mpeg,audio/wav,audio/x-wav,audio/mp4,audio/aac,audio/flac,audio/x-flac';

/** Integrated loudness (LUFS) of the soundtrack at full volume: what the social platforms normalise to. */
export const MUSIC_LOUDNESS_TARGET = -14;
/** True peak ceiling (dBTP) of the normalised soundtrack. */
export const MUSIC_TRUE_PEAK = -1.5;
export const MUSIC_MIN_VOLUME = 0.05;
export const MUSIC_MAX_FADE_SECONDS = 10;
/** "quieter" and "louder" change the volume by this factor (about 3 dB). */
export const MUSIC_VOLUME_STEP = 0.7;

export const MUSIC_MSG = {
  empty: 'The file is empty. Choose an audio file.',
  tooLarge: 'Music tracks are at most 20 MB.',
  tooLong: 'Music tracks are at most 10 minutes long.',
  notAudio: 'This file is not audio we can read. Upload an MP3, WAV, M4A/AAC or FLAC file.',
  unsupported: 'This audio format is not supported. Upload an MP3, WAV, M4A/AAC or FLAC file.',
  nameRequired: 'Track name is required',
  nameTooLong: `Track name must be ${MUSIC_NAME_MAX_LENGTH} characters or fewer`,
  notFound: 'Music track not found',
  inUse: 'This track is being used by an assembly that is still rendering. Delete it once the video is made.',
  offsetPastEnd: 'The start offset must be before the end of the track.',
} as const;

export const MUSIC_CODES = {
  empty: 'MUSIC_EMPTY',
  tooLarge: 'MUSIC_TOO_LARGE',
  tooLong: 'MUSIC_TOO_LONG',
  notAudio: 'MUSIC_NOT_AUDIO',
  unsupported: 'MUSIC_UNSUPPORTED_FORMAT',
  invalid: 'VALIDATION_ERROR',
  notFound: 'MUSIC_TRACK_NOT_FOUND',
  inUse: 'MUSIC_TRACK_IN_USE',
} as const;

/** A track as the API answers it. */
export interface MusicTrackView {
  id: string;
  workspaceId: string;
  name: string;
  format: MusicFormat;
  mime: string;
  durationSeconds: number;
  sizeBytes: number;
  channels: number;
  sampleRate: number;
  /** A signed link to the stored file (for playing it). */
  url: string;
  createdAt: string;
  createdBy: string | null;
}

/** A track's name from a file name or typed text: one line, printable, the audio extension dropped, at most 100 characters. */
export function cleanTrackName(value: unknown): string {
  if (typeof value !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  const line = value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim();
  const stem = line.replace(/\.(mp3|wav|wave|m4a|aac|flac|mp4)$/i, '').trim();
  return stem.length > MUSIC_NAME_MAX_LENGTH ? stem.slice(0, MUSIC_NAME_MAX_LENGTH).trimEnd() : stem;
}

// ---------------------------------------------------------------------------------------------------------------
// The editing config's music part

/** The music an assembly plays (editing_config.music): which track, from where, how loud, with which fades. */
export interface MusicSetting {
  track_id: string;
  /** Seconds into the track where the video's music starts. */
  offset_seconds: number;
  /** 0.05-1 of the normalised loudness (1 = -14 LUFS integrated). */
  volume: number;
  fade_in_seconds: number;
  fade_out_seconds: number;
}

export const DEFAULT_MUSIC_SETTING: Omit<MusicSetting, 'track_id'> = { offset_seconds: 0, volume: 1, fade_in_seconds: 1, fade_out_seconds: 2 };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function finite(value: unknown): number | null {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

export function clampVolume(volume: number): number {
  return round2(Math.min(1, Math.max(MUSIC_MIN_VOLUME, volume)));
}

/**
 * Any music setting (a stored row, a chat's JSON, a request) made valid, over `fallback` for what it leaves out;
 * null for no music (`null`, `'none'`, or no usable track id).
 */
export function normalizeMusicSetting(input: unknown, fallback: MusicSetting | null = null): MusicSetting | null {
  if (input === null || input === 'none') return null;
  if (!input || typeof input !== 'object' || Array.isArray(input)) return fallback;
  const raw = input as Record<string, unknown>;
  if (raw.track_id === null) return null;
  const trackId = typeof raw.track_id === 'string' && UUID.test(raw.track_id) ? raw.track_id.toLowerCase() : fallback?.track_id;
  if (!trackId) return null;
  const base = fallback && fallback.track_id === trackId ? fallback : { track_id: trackId, ...DEFAULT_MUSIC_SETTING };
  const offset = finite(raw.offset_seconds);
  const volume = finite(raw.volume);
  const fadeIn = finite(raw.fade_in_seconds);
  const fadeOut = finite(raw.fade_out_seconds);
  const fade = (n: number) => round2(Math.min(MUSIC_MAX_FADE_SECONDS, Math.max(0, n)));
  return {
    track_id: trackId,
    offset_seconds: offset === null ? base.offset_seconds : round2(Math.min(MUSIC_MAX_SECONDS, Math.max(0, offset))),
    volume: volume === null ? base.volume : clampVolume(volume),
    fade_in_seconds: fadeIn === null ? base.fade_in_seconds : fade(fadeIn),
    fade_out_seconds: fadeOut === null ? base.fade_out_seconds : fade(fadeOut),
  };
}

/** 75 → '1:15'; 9.5 → '0:09.5'. */
export function clockText(seconds: number): string {
  const whole = Math.floor(seconds);
  const tenths = Math.round((seconds - whole) * 10);
  const m = Math.floor(whole / 60);
  const s = whole % 60;
  return `${m}:${String(s).padStart(2, '0')}${tenths > 0 && tenths < 10 ? `.${tenths}` : ''}`;
}

const secondsText = (n: number): string => `${round2(n)} s`;

/** The music in words: 'Calm piano at 70% volume, from 0:12, fading in over 1 s and out over 2 s'; 'No music (silent)'. */
export function musicSummary(setting: MusicSetting | null | undefined, trackName: string | null | undefined): string {
  if (!setting) return 'No music (silent)';
  const parts = [`${trackName?.trim() || 'A deleted track'} at ${Math.round(setting.volume * 100)}% volume`];
  if (setting.offset_seconds > 0) parts.push(`from ${clockText(setting.offset_seconds)}`);
  const fades = [setting.fade_in_seconds > 0 && `in over ${secondsText(setting.fade_in_seconds)}`, setting.fade_out_seconds > 0 && `out over ${secondsText(setting.fade_out_seconds)}`].filter(Boolean);
  parts.push(fades.length ? `fading ${fades.join(' and ')}` : 'no fades');
  return parts.join(', ');
}
