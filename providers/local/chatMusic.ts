/**
 * The rule-based chat's ear for music (issue 44 item 5): "use the calm track, quieter", "no music", "fade out over
 * 3 seconds", "start the song at 0:30", "music at 60%". Reads the latest message against the workspace's track names
 * and the music playing now, and answers the music to play (absolute values) with a sentence saying it in words.
 */
import { DEFAULT_MUSIC_SETTING, MUSIC_VOLUME_STEP, clampVolume, musicSummary, type MusicSetting } from '../../domain/music';
import type { ChatMusic, ChatMusicTrack } from '../types';

const MUSIC_NOUN = '(?:music|track|song|soundtrack|tune|audio)';
const NO_MUSIC = new RegExp(`\\b(?:no|without|remove|drop|lose|mute|cut)\\s+(?:the\\s+|any\\s+)?${MUSIC_NOUN}s?\\b|\\bturn\\s+off\\s+the\\s+${MUSIC_NOUN}\\b|\\bsilent\\b|\\bno\\s+sound\\b`);
const MUSIC_WORD = new RegExp(`\\b${MUSIC_NOUN}s?\\b|\\bvolume\\b`);
const QUIETER = /\b(quieter|softer|more quiet|less loud|more subtle|subtler|lower the (?:music|volume|track|song)|turn (?:it |the (?:music|volume|track|song) )?down)\b/;
const LOUDER = /\b(louder|more volume|boost the (?:music|volume)|turn (?:it |the (?:music|volume|track|song) )?up)\b/;
const PERCENT = /\b(\d{1,3})\s?%/;
const SECONDS = '(\\d+(?:\\.\\d+)?)\\s*(?:s|sec|secs|seconds?)\\b';
const FADE_IN = new RegExp(`\\bfade[- ]?in\\s+(?:over\\s+|of\\s+|for\\s+)?${SECONDS}`);
const FADE_OUT = new RegExp(`\\bfade[- ]?out\\s+(?:over\\s+|of\\s+|for\\s+)?${SECONDS}`);
const NO_FADES = /\bno fades?\b|\bwithout fad(?:es|ing)\b/;
const OFFSET = new RegExp(`\\b(?:start|begin)\\w*\\s+(?:the\\s+${MUSIC_NOUN}\\s+)?(?:at|from)\\s+(?:(\\d+):(\\d{2})|${SECONDS})`);

/** Words of a track's name that do not pick it out. */
const STOP_WORDS = new Set(['the', 'a', 'an', 'and', 'of', 'track', 'music', 'song', 'audio', 'tune', 'mix', 'final', 'version', 'edit', 'mp3', 'wav', 'flac', 'm4a', 'aac', 'loop']);

function keywordsOf(name: string): string[] {
  return name
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w) && !/^\d+$/.test(w));
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The track the message names: its whole name, or its words before a music noun ("the calm track"); the best match. */
function namedTrack(text: string, tracks: readonly ChatMusicTrack[]): ChatMusicTrack | null {
  let best: { track: ChatMusicTrack; score: number } | null = null;
  const musicSaid = MUSIC_WORD.test(text);
  for (const track of tracks) {
    const whole = track.name.trim().toLowerCase();
    let score = whole.length >= 3 && text.includes(whole) ? 100 : 0;
    if (musicSaid) score += keywordsOf(track.name).filter((w) => new RegExp(`\\b${escape(w)}\\b`, 'u').test(text)).length;
    if (score > 0 && (!best || score > best.score)) best = { track, score };
  }
  return best?.track ?? null;
}

/**
 * `text` without the words that named music ("the calm piano track", a track's whole name), so the rest of the
 * assistant does not take "calm" in "the calm track" for a calm pace.
 */
export function withoutMusicWords(text: string, tracks: readonly ChatMusicTrack[]): string {
  let out = text;
  for (const track of tracks) {
    const whole = track.name.trim().toLowerCase();
    if (whole.length >= 3) out = out.split(whole).join(' ');
    const words = keywordsOf(track.name).map(escape);
    if (words.length) out = out.replace(new RegExp(`\\b(?:(?:${words.join('|')})\\s+)+${MUSIC_NOUN}s?\\b`, 'gu'), ' ');
  }
  return out;
}

export interface MusicUnderstanding {
  /** The music to play ('none': none); undefined: the message said nothing about music. */
  music?: ChatMusic | 'none';
  /** The change in words, for the reply. */
  words?: string;
}

function toSetting(music: ChatMusic): MusicSetting {
  const d = DEFAULT_MUSIC_SETTING;
  return {
    track_id: music.track_id,
    offset_seconds: music.offset_seconds ?? d.offset_seconds,
    volume: music.volume ?? d.volume,
    fade_in_seconds: music.fade_in_seconds ?? d.fade_in_seconds,
    fade_out_seconds: music.fade_out_seconds ?? d.fade_out_seconds,
  };
}

/** What the latest message asks of the music, given the tracks and the music playing now. */
export function understandMusic(message: string, tracks: readonly ChatMusicTrack[], current: ChatMusic | null | undefined): MusicUnderstanding {
  const text = message.toLowerCase();
  if (NO_MUSIC.test(text)) return { music: 'none', words: 'No music: the video stays silent.' };
  const chosen = namedTrack(text, tracks);
  const volumeWords = QUIETER.test(text) ? 'quieter' : LOUDER.test(text) ? 'louder' : null;
  const percent = MUSIC_WORD.test(text) ? PERCENT.exec(text) : null;
  const fadeIn = FADE_IN.exec(text);
  const fadeOut = FADE_OUT.exec(text);
  const noFades = NO_FADES.test(text);
  const offset = OFFSET.exec(text);
  const asked = chosen || volumeWords || percent || fadeIn || fadeOut || noFades || offset;
  if (!asked) {
    if (MUSIC_WORD.test(text) && tracks.length === 0) return { words: 'There is no music in this workspace yet: add tracks on the Music page.' };
    if (MUSIC_WORD.test(text) && /\b(use|play|add|with|put)\b/.test(text)) return { words: `Which track should play? ${tracks.map((t) => t.name).join(', ')}.` };
    return {};
  }
  const base: ChatMusic | null = chosen ? (current && current.track_id === chosen.id ? current : { track_id: chosen.id, ...DEFAULT_MUSIC_SETTING }) : (current ?? null);
  if (!base) {
    return { words: tracks.length ? `Which track should play? ${tracks.map((t) => t.name).join(', ')}.` : 'There is no music in this workspace yet: add tracks on the Music page.' };
  }
  const next = toSetting(base);
  if (volumeWords === 'quieter') next.volume = clampVolume(next.volume * MUSIC_VOLUME_STEP);
  if (volumeWords === 'louder') next.volume = clampVolume(next.volume / MUSIC_VOLUME_STEP);
  if (percent) next.volume = clampVolume(Number(percent[1]) / 100);
  if (noFades) {
    next.fade_in_seconds = 0;
    next.fade_out_seconds = 0;
  }
  if (fadeIn) next.fade_in_seconds = Number(fadeIn[1]);
  if (fadeOut) next.fade_out_seconds = Number(fadeOut[1]);
  if (offset) next.offset_seconds = offset[1] !== undefined ? Number(offset[1]) * 60 + Number(offset[2]) : Number(offset[3]);
  const track = tracks.find((t) => t.id === next.track_id);
  if (track && next.offset_seconds >= track.duration) next.offset_seconds = 0;
  return { music: next, words: `Music: ${musicSummary(next, track?.name)}.` };
}
