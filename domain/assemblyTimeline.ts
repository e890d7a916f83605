/**
 * The edit an assembly runs, in the shape of Shotstack's Edit API (DESIGN.md "Assembly"): a timeline of tracks of
 * clips, each with start, length and transition in/out, and an output size. One pure function builds it for the
 * dry-run and for the workflow, so the worker renders exactly what the dry-run showed; a second one turns it into
 * the single ffmpeg filter graph the worker runs (xfade between clips, scale/pad to the platform, drawtext captions).
 */
import {
  ASSEMBLY_FPS,
  ASSEMBLY_OUTPUTS,
  MAX_TRANSITION_SECONDS,
  MIN_TRANSITION_SECONDS,
  XFADE_TRANSITION,
  cleanCaption,
  parseTransitionStyle,
  type AssemblyPlatform,
  type CaptionPosition,
  type EditingConfig,
  type TransitionStyle,
} from './assembly';

/** One clip going into the edit: its file (a /api/files/... URL of ours) and how long it plays. */
export interface TimelineSourceClip {
  id: string;
  src: string;
  durationSeconds: number;
}

/** An editor's override for the junction after clip i (spec: editorState.transitions), by index. */
export interface JunctionOverride {
  type?: string | null;
  duration?: number | null;
}

export interface VideoTimelineClip {
  asset: { type: 'video'; src: string; trim: number; volume: number };
  start: number;
  length: number;
  fit: 'contain';
  transition?: { in?: TransitionStyle; out?: TransitionStyle };
  /** Which clip of the selection this is (not a Shotstack field). */
  clipId: string;
  /** Overlap with the clip before and after, seconds (not Shotstack fields: its names carry fixed speeds). */
  transitionSeconds: { in: number; out: number };
}

export interface CaptionTimelineClip {
  asset: { type: 'title'; text: string; style: 'minimal'; position: CaptionPosition; size: 'small' };
  start: number;
  length: number;
  clipId: string;
}

export interface AssemblyEdit {
  timeline: {
    background: '#000000';
    /** Topmost first, as in Shotstack: the captions track (when there are captions) over the video track. */
    tracks: Array<{ clips: Array<VideoTimelineClip | CaptionTimelineClip> }>;
  };
  output: {
    format: 'mp4';
    fps: number;
    size: { width: number; height: number };
    aspectRatio: '16:9' | '9:16';
    platform: AssemblyPlatform;
  };
  /** Seconds: the sum of the clips' lengths minus the transitions' overlaps. */
  totalDuration: number;
}

export interface BuildTimelineInput {
  clips: TimelineSourceClip[];
  platform: AssemblyPlatform;
  editing: EditingConfig;
  transitions?: ReadonlyArray<JunctionOverride | null | undefined>;
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

export function buildAssemblyTimeline({ clips, platform, editing, transitions = [] }: BuildTimelineInput): AssemblyEdit {
  if (clips.length === 0) throw new Error('An assembly needs at least one clip');
  const lengths = clips.map((clip) => {
    if (!(clip.durationSeconds > 0)) throw new Error(`Clip ${clip.id} has no duration`);
    return round3(editing.max_clip_seconds === null ? clip.durationSeconds : Math.min(clip.durationSeconds, editing.max_clip_seconds));
  });
  // junction i joins clip i and i+1; an overlap never takes more than half of either clip
  const junctions = lengths.slice(1).map((length, i) => {
    const override = transitions[i] ?? null;
    const style = parseTransitionStyle(override?.type) ?? editing.transition;
    const wanted = typeof override?.duration === 'number' && Number.isFinite(override.duration) ? override.duration : editing.transition_duration;
    const bounded = Math.min(MAX_TRANSITION_SECONDS, Math.max(MIN_TRANSITION_SECONDS, wanted));
    return { style, seconds: round3(Math.min(bounded, lengths[i] / 2, length / 2)) };
  });
  const starts: number[] = [0];
  for (let i = 1; i < clips.length; i += 1) starts.push(round3(starts[i - 1] + lengths[i - 1] - junctions[i - 1].seconds));
  const totalDuration = round3(starts[clips.length - 1] + lengths[clips.length - 1]);

  const videoClips: VideoTimelineClip[] = clips.map((clip, i) => {
    const before = i > 0 ? junctions[i - 1] : null;
    const after = i < junctions.length ? junctions[i] : null;
    const transition: VideoTimelineClip['transition'] = {};
    if (before) transition.in = before.style;
    if (after) transition.out = after.style;
    return {
      asset: { type: 'video', src: clip.src, trim: 0, volume: 0 },
      start: starts[i],
      length: lengths[i],
      fit: 'contain',
      ...(before || after ? { transition } : {}),
      clipId: clip.id,
      transitionSeconds: { in: before?.seconds ?? 0, out: after?.seconds ?? 0 },
    };
  });

  // a clip's caption shows while it is the only clip on screen
  const captionClips: CaptionTimelineClip[] = [];
  clips.forEach((clip, i) => {
    const text = cleanCaption(editing.captions[i]);
    if (!text) return;
    const start = round3(starts[i] + videoClips[i].transitionSeconds.in);
    const end = round3(starts[i] + lengths[i] - videoClips[i].transitionSeconds.out);
    if (end - start <= 0) return;
    captionClips.push({
      asset: { type: 'title', text, style: 'minimal', position: editing.caption_position, size: 'small' },
      start,
      length: round3(end - start),
      clipId: clip.id,
    });
  });

  const output = ASSEMBLY_OUTPUTS[platform];
  return {
    timeline: {
      background: '#000000',
      tracks: [...(captionClips.length > 0 ? [{ clips: captionClips }] : []), { clips: videoClips }],
    },
    output: { format: 'mp4', fps: ASSEMBLY_FPS, size: { width: output.width, height: output.height }, aspectRatio: output.aspectRatio, platform },
    totalDuration,
  };
}

export function videoTrackOf(edit: AssemblyEdit): VideoTimelineClip[] {
  const track = edit.timeline.tracks[edit.timeline.tracks.length - 1];
  return track.clips as VideoTimelineClip[];
}

export function captionTrackOf(edit: AssemblyEdit): CaptionTimelineClip[] {
  return edit.timeline.tracks.length > 1 ? (edit.timeline.tracks[0].clips as CaptionTimelineClip[]) : [];
}

export interface FilterGraphOptions {
  /** A file holding each caption's text, by caption index (drawtext reads it: no escaping of user text). */
  captionFiles?: string[];
  /**
   * Also make the watermarked preview in the same run, as [vprev]: the finished frames scaled to `width` x `height`
   * under the watermark image given as input `overlayInput` (a still of that size).
   */
  preview?: { overlayInput: number; width: number; height: number };
}

/** The watermarked preview's size: half the output's, even on both sides. */
export function previewSize(edit: AssemblyEdit): { width: number; height: number } {
  const even = (n: number) => Math.max(2, Math.round(n / 4) * 2);
  return { width: even(edit.output.size.width), height: even(edit.output.size.height) };
}

const fmt = (n: number): string => String(round3(n));

/**
 * The one ffmpeg filter graph of an edit, over inputs 0..n-1 (the video track's files in order), ending in [vout]:
 * each input trimmed to its length, scaled and padded to the output size at a common frame rate, joined by xfade at
 * each clip's start, captions drawn over the joined video while their clip plays.
 */
export function assemblyFilterGraph(edit: AssemblyEdit, options: FilterGraphOptions = {}): string {
  const { width, height } = edit.output.size;
  const fps = edit.output.fps;
  const video = videoTrackOf(edit);
  const parts: string[] = video.map(
    (clip, i) =>
      `[${i}:v]trim=duration=${fmt(clip.length)},setpts=PTS-STARTPTS,` +
      `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:color=black,` +
      `setsar=1,fps=${fps},format=yuv420p,settb=AVTB[c${i}]`,
  );
  let last = 'c0';
  for (let i = 1; i < video.length; i += 1) {
    const clip = video[i];
    const style = clip.transition?.in ?? 'fade';
    const out = `x${i}`;
    parts.push(`[${last}][c${i}]xfade=transition=${XFADE_TRANSITION[style]}:duration=${fmt(clip.transitionSeconds.in)}:offset=${fmt(clip.start)}[${out}]`);
    last = out;
  }
  const captions = captionTrackOf(edit);
  if (captions.length > 0) {
    const files = options.captionFiles ?? [];
    if (files.length < captions.length) throw new Error('assemblyFilterGraph: a caption file is needed for each caption');
    const fontSize = Math.round(Math.min(width, height) / 18);
    const draws = captions.map((caption, i) => {
      const y = caption.asset.position === 'top' ? `h*0.08` : caption.asset.position === 'center' ? `(h-text_h)/2` : `h*0.88-text_h`;
      return (
        `drawtext=textfile='${files[i].replace(/'/g, '')}':fontsize=${fontSize}:fontcolor=white:box=1:boxcolor=black@0.45:boxborderw=${Math.round(fontSize / 3)}` +
        `:x=(w-text_w)/2:y=${y}:enable='between(t,${fmt(caption.start)},${fmt(caption.start + caption.length)})'`
      );
    });
    parts.push(`[${last}]${draws.join(',')},format=yuv420p[${options.preview ? 'vfinal' : 'vout'}]`);
  } else {
    parts.push(`[${last}]format=yuv420p[${options.preview ? 'vfinal' : 'vout'}]`);
  }
  if (options.preview) {
    const { overlayInput, width: pw, height: ph } = options.preview;
    parts.push('[vfinal]split=2[vout][vp]');
    // a preview is seen once before approval: the cheapest scaler is enough at half size
    parts.push(`[vp]scale=${pw}:${ph}:flags=fast_bilinear[vps];[vps][${overlayInput}:v]overlay=0:0:format=auto,format=yuv420p[vprev]`);
  }
  return parts.join(';');
}
