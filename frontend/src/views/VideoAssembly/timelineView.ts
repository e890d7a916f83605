/**
 * The dry run's edit (Shotstack Edit API shape: timeline.tracks[].clips[] with asset, start, length and
 * transition in/out; output.size) turned into what the timeline preview draws. Pure and forgiving: a part the
 * answer lacks is left out rather than guessed.
 */

export interface TimelineClip {
  key: string;
  /** the clip's name for video clips, the caption for a title */
  label: string;
  kind: 'video' | 'title' | 'audio' | 'other';
  start: number;
  length: number;
  transitionIn: string | null;
  transitionOut: string | null;
  /** A brand part (title card, logo, end card): not a Shotstack field. */
  part?: 'titleCard' | 'logo' | 'endCard';
}

const PART_LABEL = { titleCard: 'Title card', logo: 'Logo', endCard: 'End card' } as const;

/** The logo watermark as the edit places it: "top right, 151 × 76 px, 85% opacity" (what the clip leaves out is left out). */
function logoDetail(clip: Record<string, unknown>): string | null {
  const position = typeof clip.position === 'string' ? clip.position.replace(/-/g, ' ') : null;
  const box = clip.box && typeof clip.box === 'object' ? (clip.box as Record<string, unknown>) : null;
  const width = typeof box?.width === 'number' ? box.width : null;
  const height = typeof box?.height === 'number' ? box.height : null;
  const opacity = typeof clip.opacity === 'number' && Number.isFinite(clip.opacity) ? `${Math.round(clip.opacity * 100)}% opacity` : null;
  const parts = [position, width !== null && height !== null ? `${width} × ${height} px` : null, opacity].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : null;
}

export interface TimelineTrack {
  key: string;
  label: string;
  clips: TimelineClip[];
}

export interface TimelineView {
  tracks: TimelineTrack[];
  width: number | null;
  height: number | null;
  /** seconds */
  totalDuration: number;
}

type Json = Record<string, unknown>;

function obj(value: unknown): Json | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

/** The name of the listed clip an asset plays: by its clip id when the edit carries one, else by its file. */
export interface ClipLookup {
  byId: ReadonlyMap<string, string>;
  byFile: ReadonlyMap<string, string>;
}

function pathOf(url: string): string {
  try {
    return new URL(url, 'http://x').pathname;
  } catch {
    return url;
  }
}

function clipLabel(clip: Json, asset: Json, lookup: ClipLookup, fallback: string): string {
  for (const id of [clip.clipId, clip.clip_id, asset.clipId, asset.clip_id, obj(clip.meta)?.clipId, obj(clip.meta)?.clip_id]) {
    const name = typeof id === 'string' ? lookup.byId.get(id) : undefined;
    if (name) return name;
  }
  const src = str(asset.src);
  if (src) {
    const name = lookup.byFile.get(src) ?? lookup.byFile.get(pathOf(src));
    if (name) return name;
  }
  return fallback;
}

export function timelineView(answer: unknown, lookup: ClipLookup): TimelineView | null {
  const root = obj(answer);
  const request = obj(root?.request) ?? root;
  const timeline = obj(request?.timeline);
  const rawTracks = Array.isArray(timeline?.tracks) ? (timeline.tracks as unknown[]) : null;
  if (!rawTracks) return null;
  let videoCount = 0;
  let end = 0;
  const tracks: TimelineTrack[] = rawTracks.map((rawTrack, t) => {
    const track = obj(rawTrack);
    const rawClips = Array.isArray(track?.clips) ? (track.clips as unknown[]) : [];
    const clips: TimelineClip[] = [];
    rawClips.forEach((rawClip, c) => {
      const clip = obj(rawClip);
      const start = num(clip?.start);
      const length = num(clip?.length);
      if (!clip || start === null || length === null || length <= 0) return;
      const asset = obj(clip.asset) ?? {};
      const type = str(asset.type);
      const kind: TimelineClip['kind'] = type === 'video' ? 'video' : type === 'title' || type === 'caption' || type === 'text' ? 'title' : 'other';
      if (kind === 'video') videoCount += 1;
      const label = kind === 'video' ? clipLabel(clip, asset, lookup, `Clip ${videoCount}`) : (str(asset.text) ?? str(asset.html) ?? type ?? 'Item');
      const transition = obj(clip.transition);
      end = Math.max(end, start + length);
      const part = clip.part === 'titleCard' || clip.part === 'logo' || clip.part === 'endCard' ? clip.part : null;
      if (part) {
        const detail = part === 'titleCard' ? str(asset.text) : part === 'logo' ? logoDetail(clip) : null;
        clips.push({ key: `${t}:${c}`, label: detail ? `${PART_LABEL[part]}: ${detail}` : PART_LABEL[part], kind: 'other', start, length, transitionIn: null, transitionOut: null, part });
        return;
      }
      clips.push({ key: `${t}:${c}`, label, kind, start, length, transitionIn: str(transition?.in), transitionOut: str(transition?.out) });
    });
    const kinds = new Set(clips.map((c) => c.kind));
    const label = clips.length > 0 && clips.every((c) => c.part) ? 'Brand' : kinds.size === 1 && kinds.has('title') ? 'Captions' : kinds.has('video') ? 'Video' : `Track ${t + 1}`;
    return { key: String(t), label, clips };
  });
  const preview = obj(root?.preview);
  // Shotstack's timeline.soundtrack: the music under the whole video (from 0 for `length` seconds)
  const soundtrack = obj(timeline?.soundtrack);
  const musicLength = num(soundtrack?.length);
  if (soundtrack && musicLength !== null && musicLength > 0) {
    const name = str(obj(preview?.music)?.name) ?? 'Music';
    tracks.push({ key: 'soundtrack', label: 'Music', clips: [{ key: 'soundtrack:0', label: name, kind: 'audio', start: 0, length: musicLength, transitionIn: null, transitionOut: null }] });
  }
  const output = obj(request?.output);
  const size = obj(output?.size);
  const total = num(preview?.totalDuration) ?? num(preview?.total_duration) ?? num(preview?.duration) ?? num(root?.totalDuration) ?? end;
  return {
    // the video track first, as an editor shows it, then captions
    tracks: tracks.filter((tr) => tr.clips.length > 0).sort((a, b) => rank(a) - rank(b)),
    width: num(size?.width) ?? num(obj(preview?.output)?.width) ?? num(preview?.width),
    height: num(size?.height) ?? num(obj(preview?.output)?.height) ?? num(preview?.height),
    totalDuration: total,
  };
}

function rank(track: TimelineTrack): number {
  return track.label === 'Video' ? 0 : track.label === 'Captions' ? 2 : track.label === 'Brand' ? 2.5 : track.label === 'Music' ? 3 : 1;
}

/** 12.5 -> "12.5 s", 5 -> "5 s" */
export function secondsText(seconds: number): string {
  const rounded = Math.round(seconds * 100) / 100;
  return `${rounded} s`;
}

/** A transition's name as users read it: wipeLeft -> "wipe left". */
export function transitionText(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
