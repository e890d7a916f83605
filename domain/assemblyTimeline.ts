/**
 * The edit an assembly runs, in the shape of Shotstack's Edit API (DESIGN.md "Assembly"): a timeline of tracks of
 * clips, each with start, length and transition in/out, and an output size. One pure function builds it for the
 * dry-run and for the workflow, so the worker renders exactly what the dry-run showed; a second one turns it into
 * the single ffmpeg filter graph the worker runs (xfade between clips, scale/pad to the platform, the captions and brand
 * parts overlaid as stills drawn for their boxes).
 */
import {
  ASSEMBLY_FORMAT_SPECS,
  ASSEMBLY_FPS,
  MAX_TRANSITION_SECONDS,
  MIN_TRANSITION_SECONDS,
  XFADE_TRANSITION,
  cleanCaption,
  parseTransitionStyle,
  platformFormat,
  type AssemblyFormat,
  type AssemblyPlatform,
  type CaptionPosition,
  type EditingConfig,
  type TransitionStyle,
} from './assembly';
import { brandLayout, logoBox, type Box, type BrandSource, type LogoCorner, type TitleStyle } from './brandVideo';
import { textColorOn, type BrandFont } from './brandKit';
import { MUSIC_LOUDNESS_TARGET, MUSIC_TRUE_PEAK } from './music';

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
  /** 'contain': the whole picture, padded black (the platform formats); 'crop': the frame filled, the overflow cut off. */
  fit: 'contain' | 'crop';
  transition?: { in?: TransitionStyle; out?: TransitionStyle };
  /** Which clip of the selection this is (not a Shotstack field). */
  clipId: string;
  /** Overlap with the clip before and after, seconds (not Shotstack fields: its names carry fixed speeds). */
  transitionSeconds: { in: number; out: number };
}

/** How a text still is drawn (Pango via sharp, providers/media/textStill.ts): not Shotstack fields. */
export interface TextStyle {
  font: string;
  /** #RRGGBB */
  color: string;
  /** Filled behind the text (#RRGGBB), or null: transparent. */
  background: string | null;
  backgroundOpacity: number;
  /**
   * Where the background is filled: over the whole box (absent or 'box'), or only behind the text with a margin of a
   * third of `maxFontPx` ('text': a band that hugs the text, as plain captions have).
   */
  backgroundFit?: 'box' | 'text';
  /** The largest size the text is drawn at; longer text is shrunk, then wrapped, to fit its box. */
  maxFontPx: number;
  bold: boolean;
}

export interface CaptionTimelineClip {
  asset: { type: 'title'; text: string; style: 'minimal' | 'brand'; position: CaptionPosition; size: 'small' };
  start: number;
  length: number;
  clipId: string;
  /**
   * The box (pixels of the output, inside its safe area) and the style of the still drawn for it: every caption of an
   * edit built now, brand ('brand') or plain ('minimal'). A timeline recorded before plain captions were stills has
   * its plain captions without them; those are drawn with ffmpeg's drawtext as they were then.
   */
  box?: Box;
  textStyle?: TextStyle;
}

/** A caption drawn as a still over its box (every caption built now; not a recorded timeline's older plain ones). */
export function captionHasStill(caption: CaptionTimelineClip): caption is CaptionTimelineClip & { box: Box; textStyle: TextStyle } {
  return caption.box !== undefined && caption.textStyle !== undefined;
}

/**
 * The font of plain captions (no kit, or brand captions off): a neutral face installed with the brand fonts, the
 * Arabic and CJK fallbacks after it (domain/brandKit.ts brandFontFamilies) for the glyphs it lacks.
 */
export const PLAIN_CAPTION_FONT: BrandFont = 'Noto Sans';

/**
 * Plain captions look as the drawtext captions before them did: white, regular weight, on a black band at 45%
 * opacity that hugs the text; shrunk then wrapped to fit the caption box like every text still.
 */
export function plainCaptionStyle(maxFontPx: number): TextStyle {
  return { font: PLAIN_CAPTION_FONT, color: '#FFFFFF', background: '#000000', backgroundOpacity: 0.45, backgroundFit: 'text', maxFontPx, bold: false };
}

/** The title card: text over the first clip, on a brand-coloured card (style 'card') or straight over it ('overlay'). */
export interface TitleCardClip {
  part: 'titleCard';
  asset: { type: 'title'; text: string; style: TitleStyle };
  start: number;
  length: number;
  box: Box;
  textStyle: TextStyle;
}

/** The logo watermark over the clips (not over the end card): Shotstack's image asset with position and opacity. */
export interface LogoClip {
  part: 'logo';
  asset: { type: 'image'; src: string };
  start: number;
  length: number;
  position: LogoCorner;
  opacity: number;
  box: Box;
}

/** The end card after the last clip: a full frame in the brand's colour with the logo, call to action and contact lines. */
export interface EndCardClip {
  part: 'endCard';
  asset: { type: 'card'; background: string; logoSrc: string | null; logoSize: { width: number; height: number } | null; callToAction: string; contactLines: string[] };
  start: number;
  length: number;
  logoBox: Box;
  callToAction: { box: Box; textStyle: TextStyle };
  contact: { box: Box; textStyle: TextStyle };
}

export type BrandTimelineClip = TitleCardClip | LogoClip | EndCardClip;

/** The workspace's track the edit plays (resolved from editing.music by the service): its file and length. */
export interface SoundtrackSource {
  trackId: string;
  /** The stored file, as an unsigned /api/files/... URL of ours. */
  src: string;
  durationSeconds: number;
}

/**
 * Shotstack's `timeline.soundtrack` ({ src, effect, volume }), extended the way its audio assets are: `trim` is where
 * in the track the video's music starts. The rest are not Shotstack fields: Shotstack's fade effects have fixed
 * lengths, and it does not normalise loudness.
 */
export interface AssemblySoundtrack {
  src: string;
  effect?: 'fadeIn' | 'fadeOut' | 'fadeInFadeOut';
  /** 0.05-1: the loudness target is lowered by 20·log10(volume) dB from `loudness`. */
  volume: number;
  /** Seconds into the track where the video's music starts. */
  trim: number;
  /** Seconds of music that play from the video's start: its length, or less when the track ends sooner (silence after). */
  length: number;
  fadeInSeconds: number;
  fadeOutSeconds: number;
  /** Integrated loudness (LUFS, EBU R128) the music is normalised to at full volume; true peak at most `truePeak` dBTP. */
  loudness: number;
  truePeak: number;
  trackId: string;
}

export interface AssemblyEdit {
  timeline: {
    background: '#000000';
    /** The music under the video; absent: the video is silent (no audio stream). */
    soundtrack?: AssemblySoundtrack;
    /**
     * Topmost first, as in Shotstack: the brand track (title card, logo, end card; when the workspace has a kit and
     * the assembly keeps any of them), the captions track (when there are captions), the video track.
     */
    tracks: Array<{ clips: Array<VideoTimelineClip | CaptionTimelineClip | BrandTimelineClip> }>;
  };
  output: {
    format: 'mp4';
    fps: number;
    size: { width: number; height: number };
    /** The format (issue 44 item 4): the platform's own ('16:9' or '9:16') unless another was asked for. */
    aspectRatio: AssemblyFormat;
    platform: AssemblyPlatform;
  };
  /** Seconds: the sum of the clips' lengths minus the transitions' overlaps, plus the end card's length. */
  totalDuration: number;
}

export interface BuildTimelineInput {
  clips: TimelineSourceClip[];
  platform: AssemblyPlatform;
  /** The output's format; absent: the platform's own (as before formats). Timing is the same in every format. */
  format?: AssemblyFormat;
  editing: EditingConfig;
  transitions?: ReadonlyArray<JunctionOverride | null | undefined>;
  /** The track of editing.music; without it (or without editing.music) the edit has no soundtrack. */
  soundtrack?: SoundtrackSource | null;
  /** The workspace's stored kit as the edit uses it; without it the edit has no brand parts (as before brand kits). */
  brand?: BrandSource | null;
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/**
 * The soundtrack of `editing.music` over a video of `totalDuration` seconds: the track from its offset, trimmed to the
 * video (or to the track's end), the fades fitted into what plays. Null without music, or when nothing of the track
 * is left after the offset.
 */
export function soundtrackFor(editing: EditingConfig, source: SoundtrackSource | null | undefined, totalDuration: number): AssemblySoundtrack | null {
  const music = editing.music ?? null;
  if (!music || !source || music.track_id !== source.trackId) return null;
  const trim = round3(Math.min(music.offset_seconds, source.durationSeconds));
  const length = round3(Math.min(totalDuration, source.durationSeconds - trim));
  if (!(length > 0.05)) return null;
  let fadeIn = music.fade_in_seconds;
  let fadeOut = music.fade_out_seconds;
  // both fades together take at most the music's length, each shortened in proportion
  if (fadeIn + fadeOut > length) {
    const scale = length / (fadeIn + fadeOut);
    fadeIn *= scale;
    fadeOut *= scale;
  }
  const effect = fadeIn > 0 && fadeOut > 0 ? 'fadeInFadeOut' : fadeIn > 0 ? 'fadeIn' : fadeOut > 0 ? 'fadeOut' : undefined;
  return {
    src: source.src,
    ...(effect ? { effect } : {}),
    volume: music.volume,
    trim,
    length,
    fadeInSeconds: round3(fadeIn),
    fadeOutSeconds: round3(fadeOut),
    loudness: MUSIC_LOUDNESS_TARGET,
    truePeak: MUSIC_TRUE_PEAK,
    trackId: source.trackId,
  };
}

export function buildAssemblyTimeline({ clips, platform, format: asked, editing, transitions = [], soundtrack: source = null, brand = null }: BuildTimelineInput): AssemblyEdit {
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
  const clipsEnd = round3(starts[clips.length - 1] + lengths[clips.length - 1]);
  const output = ASSEMBLY_FORMAT_SPECS[asked ?? platformFormat(platform)];
  const layout = brandLayout(output.width, output.height);
  const parts = editing.brand;
  const endCard = brand && parts.end_card ? round3(parts.end_card_seconds) : 0;
  const totalDuration = round3(clipsEnd + endCard);

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
      fit: output.fit,
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
    const branded = brand !== null && parts.captions;
    captionClips.push({
      asset: { type: 'title', text, style: branded ? 'brand' : 'minimal', position: editing.caption_position, size: 'small' },
      start,
      length: round3(end - start),
      clipId: clip.id,
      box: layout.caption[editing.caption_position],
      textStyle: branded
        ? // the brand's font and accent colour on a dark band, readable over any footage
          { font: brand.font, color: brand.secondaryColor, background: '#000000', backgroundOpacity: 0.55, maxFontPx: layout.captionMaxFontPx, bold: true }
        : plainCaptionStyle(layout.captionMaxFontPx),
    });
  });

  const brandClips: BrandTimelineClip[] = [];
  if (brand && parts.title_card && brand.title) {
    const card = parts.title_style === 'card';
    brandClips.push({
      part: 'titleCard',
      asset: { type: 'title', text: brand.title, style: parts.title_style },
      start: 0,
      length: round3(Math.min(parts.title_seconds, clipsEnd)),
      box: layout.title,
      textStyle: card
        ? { font: brand.font, color: textColorOn(brand.primaryColor), background: brand.primaryColor, backgroundOpacity: 1, maxFontPx: layout.titleMaxFontPx, bold: true }
        : { font: brand.font, color: '#FFFFFF', background: '#000000', backgroundOpacity: 0.35, maxFontPx: layout.titleMaxFontPx, bold: true },
    });
  }
  if (brand && parts.logo && brand.logo) {
    brandClips.push({
      part: 'logo',
      asset: { type: 'image', src: brand.logo.src },
      start: 0,
      length: clipsEnd,
      position: parts.logo_corner,
      opacity: parts.logo_opacity,
      box: logoBox(layout, brand.logo, parts.logo_corner, parts.logo_size),
    });
  }
  if (brand && endCard > 0) {
    const ink = textColorOn(brand.primaryColor);
    brandClips.push({
      part: 'endCard',
      asset: {
        type: 'card',
        background: brand.primaryColor,
        logoSrc: brand.logo?.src ?? null,
        logoSize: brand.logo ? { width: brand.logo.width, height: brand.logo.height } : null,
        callToAction: brand.callToAction,
        contactLines: brand.contactLines,
      },
      start: clipsEnd,
      length: endCard,
      logoBox: layout.endLogo,
      callToAction: { box: layout.endCallToAction, textStyle: { font: brand.font, color: brand.secondaryColor, background: null, backgroundOpacity: 0, maxFontPx: layout.endCallToActionMaxFontPx, bold: true } },
      contact: { box: layout.endContact, textStyle: { font: brand.font, color: ink, background: null, backgroundOpacity: 0, maxFontPx: layout.endContactMaxFontPx, bold: false } },
    });
  }

  const soundtrack = soundtrackFor(editing, source, totalDuration);
  return {
    timeline: {
      background: '#000000',
      ...(soundtrack ? { soundtrack } : {}),
      tracks: [...(brandClips.length > 0 ? [{ clips: brandClips }] : []), ...(captionClips.length > 0 ? [{ clips: captionClips }] : []), { clips: videoClips }],
    },
    output: { format: 'mp4', fps: ASSEMBLY_FPS, size: { width: output.width, height: output.height }, aspectRatio: output.format, platform },
    totalDuration,
  };
}

export function videoTrackOf(edit: AssemblyEdit): VideoTimelineClip[] {
  const track = edit.timeline.tracks[edit.timeline.tracks.length - 1];
  return track.clips as VideoTimelineClip[];
}

const isBrandClip = (clip: object): clip is BrandTimelineClip => 'part' in clip;

export function captionTrackOf(edit: AssemblyEdit): CaptionTimelineClip[] {
  const track = edit.timeline.tracks.slice(0, -1).find((t) => t.clips.length > 0 && !isBrandClip(t.clips[0]));
  return track ? (track.clips as CaptionTimelineClip[]) : [];
}

/** The brand track's clips (title card, logo, end card), empty without brand parts. */
export function brandTrackOf(edit: AssemblyEdit): BrandTimelineClip[] {
  const track = edit.timeline.tracks.slice(0, -1).find((t) => t.clips.length > 0 && isBrandClip(t.clips[0]));
  return track ? (track.clips as BrandTimelineClip[]) : [];
}

export function brandPartOf<P extends BrandTimelineClip['part']>(edit: AssemblyEdit, part: P): Extract<BrandTimelineClip, { part: P }> | null {
  return (brandTrackOf(edit).find((clip) => clip.part === part) as Extract<BrandTimelineClip, { part: P }> | undefined) ?? null;
}

/** Where the clips end (the end card, when there is one, starts there). */
export function clipsEndOf(edit: AssemblyEdit): number {
  const video = videoTrackOf(edit);
  const last = video[video.length - 1];
  return round3(last.start + last.length);
}

/** What loudnorm's first pass measured over the music that plays (its print_format=json answer). */
export interface LoudnessMeasurement {
  inputI: number;
  inputTp: number;
  inputLra: number;
  inputThresh: number;
  targetOffset: number;
}

export interface FilterGraphOptions {
  /**
   * The soundtrack's file as input `input`, and what loudnorm measured of it (soundtrackMeasureFilter); null: not
   * measurable (silence), played at its volume only. Needed when the edit has a soundtrack.
   */
  soundtrack?: { input: number; measured: LoudnessMeasurement | null };
  /**
   * A file holding a caption's text, by caption index, for each caption without a still (a recorded timeline's plain
   * captions, drawn with drawtext, which reads the file: no escaping of user text).
   */
  captionFiles?: Array<string | undefined>;
  /**
   * Also make the watermarked preview in the same run, as [vprev]: the finished frames scaled to `width` x `height`
   * under the watermark image given as input `overlayInput` (a still of that size).
   */
  preview?: { overlayInput: number; width: number; height: number };
  /**
   * The stills as inputs (made once by the worker, each the size of its box): each caption's with a box (brand or
   * plain) by caption index, the title card's, the logo's (scaled, its opacity in its alpha) and the end card's (a
   * full frame looped for the card's length). Needed for each caption with a box and each brand part the edit has.
   */
  brandStills?: { captions?: Array<number | undefined>; titleCard?: number; logo?: number; endCard?: number };
}

/** The watermarked preview's size: half the output's, even on both sides. */
export function previewSize(edit: AssemblyEdit): { width: number; height: number } {
  const even = (n: number) => Math.max(2, Math.round(n / 4) * 2);
  return { width: even(edit.output.size.width), height: even(edit.output.size.height) };
}

const fmt = (n: number): string => String(round3(n));

/** The integrated loudness (LUFS) the soundtrack is brought to: the target at full volume, lowered by the volume. */
export function soundtrackLoudnessTarget(soundtrack: AssemblySoundtrack): number {
  const target = soundtrack.loudness + 20 * Math.log10(Math.max(0.001, soundtrack.volume));
  return Math.round(Math.min(-5, Math.max(-70, target)) * 10) / 10;
}

/** The music that plays, before normalisation: from `trim`, `length` seconds, 48 kHz stereo, faded in and out. */
function soundtrackPrelude(soundtrack: AssemblySoundtrack): string {
  const parts = [`atrim=start=${fmt(soundtrack.trim)}:duration=${fmt(soundtrack.length)}`, 'asetpts=PTS-STARTPTS', 'aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo'];
  if (soundtrack.fadeInSeconds > 0) parts.push(`afade=t=in:st=0:d=${fmt(soundtrack.fadeInSeconds)}`);
  if (soundtrack.fadeOutSeconds > 0) parts.push(`afade=t=out:st=${fmt(Math.max(0, soundtrack.length - soundtrack.fadeOutSeconds))}:d=${fmt(soundtrack.fadeOutSeconds)}`);
  return parts.join(',');
}

/** loudnorm's range target: at least the music's own range, so its linear mode keeps the music's dynamics as they are. */
function rangeTarget(measured: LoudnessMeasurement | null): number {
  return Math.min(50, Math.max(11, Math.ceil((measured?.inputLra ?? 0) + 1)));
}

/**
 * loudnorm's first pass (EBU R128) over exactly the music that plays: its input (the track's file) is input 0, and
 * ffmpeg prints the measurement as JSON at the end of its log (providers/media/loudness.ts reads it).
 */
export function soundtrackMeasureFilter(soundtrack: AssemblySoundtrack): string {
  return `[0:a]${soundtrackPrelude(soundtrack)},loudnorm=I=${soundtrackLoudnessTarget(soundtrack)}:TP=${soundtrack.truePeak}:LRA=${rangeTarget(null)}:print_format=json[aout]`;
}

/**
 * The soundtrack's part of the graph, ending in [aout] (and [aprev] for the preview): the music that plays,
 * normalised by loudnorm's second pass with the first pass's measurement (linear: one gain over the whole track),
 * then padded with silence to the video's length when the track ends sooner.
 */
function soundtrackGraph(edit: AssemblyEdit, soundtrack: AssemblySoundtrack, options: NonNullable<FilterGraphOptions['soundtrack']>, preview: boolean): string {
  const m = options.measured;
  const usable = m !== null && [m.inputI, m.inputTp, m.inputLra, m.inputThresh, m.targetOffset].every(Number.isFinite) && m.inputI > -70 && m.inputThresh > -70;
  const normalise = usable
    ? // loudnorm takes a measured range of 0 (a steady tone) as "not measured": the least range it accepts stands for it
      `loudnorm=I=${soundtrackLoudnessTarget(soundtrack)}:TP=${soundtrack.truePeak}:LRA=${rangeTarget(m)}` +
      `:measured_I=${m.inputI}:measured_TP=${m.inputTp}:measured_LRA=${Math.max(0.01, m.inputLra)}:measured_thresh=${m.inputThresh}:offset=${m.targetOffset}` +
      ':linear=true:print_format=none,aresample=48000'
    : `volume=${soundtrack.volume}`;
  const total = fmt(edit.totalDuration);
  const chain = `[${options.input}:a]${soundtrackPrelude(soundtrack)},${normalise},apad=whole_dur=${total},atrim=duration=${total},asetpts=PTS-STARTPTS`;
  return preview ? `${chain},asplit=2[aout][aprev]` : `${chain}[aout]`;
}

/**
 * The one ffmpeg filter graph of an edit, over inputs 0..n-1 (the video track's files in order), ending in [vout]:
 * each input trimmed to its length, scaled and padded to the output size at a common frame rate, joined by xfade at
 * each clip's start, captions (stills, or drawtext for a recorded timeline's older plain captions) and brand parts
 * overlaid on the joined video while they play. With a soundtrack, also [aout] (and [aprev]): the music that plays,
 * loudness-normalised, as long as the video.
 */
export function assemblyFilterGraph(edit: AssemblyEdit, options: FilterGraphOptions = {}): string {
  const { width, height } = edit.output.size;
  const fps = edit.output.fps;
  const video = videoTrackOf(edit);
  const parts: string[] = video.map(
    (clip, i) =>
      `[${i}:v]trim=duration=${fmt(clip.length)},setpts=PTS-STARTPTS,` +
      (clip.fit === 'crop'
        ? `scale=${width}:${height}:force_original_aspect_ratio=increase,crop=${width}:${height},`
        : `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:color=black,`) +
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
  const stills = options.brandStills ?? {};
  const steps: string[] = [];
  let current = last;
  let step = 0;
  const overlay = (input: number | undefined, box: Box, enable: string, what: string): void => {
    if (input === undefined) throw new Error(`assemblyFilterGraph: ${what} needs its still`);
    const out = `o${step++}`;
    steps.push(`[${current}][${input}:v]overlay=x=${box.x}:y=${box.y}:format=auto:enable='${enable}'[${out}]`);
    current = out;
  };
  // a recorded timeline's plain captions without a box (admitted before plain captions were stills): drawtext, as then
  const drawn = captions.flatMap((caption, i) => (captionHasStill(caption) ? [] : [{ caption, i }]));
  if (drawn.length > 0) {
    const files = options.captionFiles ?? [];
    const fontSize = Math.round(Math.min(width, height) / 18);
    const draws = drawn.map(({ caption, i }) => {
      const file = files[i];
      if (file === undefined) throw new Error(`assemblyFilterGraph: caption ${i} needs its text file`);
      const y = caption.asset.position === 'top' ? `h*0.08` : caption.asset.position === 'center' ? `(h-text_h)/2` : `h*0.88-text_h`;
      return (
        `drawtext=textfile='${file.replace(/'/g, '')}':fontsize=${fontSize}:fontcolor=white:box=1:boxcolor=black@0.45:boxborderw=${Math.round(fontSize / 3)}` +
        `:x=(w-text_w)/2:y=${y}:enable='between(t,${fmt(caption.start)},${fmt(caption.start + caption.length)})'`
      );
    });
    const out = `o${step++}`;
    steps.push(`[${current}]${draws.join(',')}[${out}]`);
    current = out;
  }
  captions.forEach((caption, i) => {
    if (!captionHasStill(caption)) return;
    overlay(stills.captions?.[i], caption.box, `between(t,${fmt(caption.start)},${fmt(caption.start + caption.length)})`, `caption ${i}`);
  });
  const title = brandPartOf(edit, 'titleCard');
  if (title) overlay(stills.titleCard, title.box, `between(t,${fmt(title.start)},${fmt(title.start + title.length)})`, 'the title card');
  const logo = brandPartOf(edit, 'logo');
  if (logo) overlay(stills.logo, logo.box, `between(t,${fmt(logo.start)},${fmt(logo.start + logo.length)})`, 'the logo');
  const end = brandPartOf(edit, 'endCard');
  const finalLabel = options.preview ? 'vfinal' : 'vout';
  if (end) {
    if (stills.endCard === undefined) throw new Error('assemblyFilterGraph: the end card needs its still');
    steps.push(`[${stills.endCard}:v]trim=duration=${fmt(end.length)},setpts=PTS-STARTPTS,setsar=1,fps=${fps},format=yuv420p,settb=AVTB[endcard]`);
    steps.push(`[${current}]format=yuv420p,setsar=1[main]`);
    steps.push(`[main][endcard]concat=n=2:v=1:a=0,format=yuv420p[${finalLabel}]`);
  } else {
    steps.push(`[${current}]format=yuv420p[${finalLabel}]`);
  }
  parts.push(...steps);
  if (options.preview) {
    const { overlayInput, width: pw, height: ph } = options.preview;
    parts.push('[vfinal]split=2[vout][vp]');
    // a preview is seen once before approval: the cheapest scaler is enough at half size
    parts.push(`[vp]scale=${pw}:${ph}:flags=fast_bilinear[vps];[vps][${overlayInput}:v]overlay=0:0:format=auto,format=yuv420p[vprev]`);
  }
  const soundtrack = edit.timeline.soundtrack;
  if (soundtrack) {
    if (!options.soundtrack) throw new Error('assemblyFilterGraph: the soundtrack needs its input and measurement');
    parts.push(soundtrackGraph(edit, soundtrack, options.soundtrack, options.preview !== undefined));
  }
  return parts.join(';');
}
