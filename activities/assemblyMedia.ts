/**
 * ffmpeg work of the assembly workflow: render an edit (domain/assemblyTimeline.ts) with its one filter graph, the
 * video and its watermarked preview from the same decoded frames in one run. No policy: the activities decide what
 * to render and where it goes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { assemblyFilterGraph, brandPartOf, captionHasStill, captionTrackOf, previewSize, soundtrackMeasureFilter, type AssemblyEdit, type FilterGraphOptions } from '../domain/assemblyTimeline';
import { endCardPng, logoStillPng, textStillPng } from '../providers/media/brandStills';
import { runFfmpeg, type FfmpegRunStats } from '../providers/media/ffmpeg';
import { measureLoudness } from '../providers/media/loudness';
import { watermarkOverlayOnce } from './clipMedia';

export interface RenderEditOptions {
  preset: string;
  /** Also write the watermarked preview (half size) here. */
  previewOutput?: string;
  /** A local copy of the soundtrack's file; needed when the edit has a soundtrack. */
  soundtrackFile?: string;
  /** A local copy of the logo's PNG; needed when the edit has a logo watermark or an end card with the logo. */
  logoFile?: string;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/**
 * The preview's encoder settings: x264's ultrafast preset at a higher CRF. The preview is a watermarked, half-size
 * copy for the approval screen; at veryfast it cost a fifth more CPU on top of the video itself (issue 10's bench,
 * target 1.2x the bare join), at ultrafast about a twentieth.
 */
const PREVIEW_ENCODER = { preset: 'ultrafast', crf: 28 } as const;

function h264(preset: string, crf: number, edit: AssemblyEdit): string[] {
  return ['-c:v', 'libx264', '-preset', preset, '-crf', String(crf), '-pix_fmt', 'yuv420p', '-r', String(edit.output.fps), '-movflags', '+faststart', '-t', String(edit.totalDuration)];
}

/** The output's audio: none without a soundtrack (silent, as before music), else the graph's `label` as AAC stereo at 48 kHz. */
function audio(edit: AssemblyEdit, label: string, bitrate: string): string[] {
  return edit.timeline.soundtrack ? ['-map', `[${label}]`, '-c:a', 'aac', '-b:a', bitrate, '-ac', '2', '-ar', '48000'] : ['-an'];
}

/** A still (a caption or brand part) as an ffmpeg input: a PNG, looped for `loopSeconds` when it is a card of its own. */
export interface BrandStillInput {
  file: string;
  loopSeconds?: number;
}

/**
 * Draws the edit's stills once into `scratch` (every caption with a box, brand or plain, and the brand parts) and
 * answers them as inputs from `firstInput` on, with where each is in the filter graph's options.
 */
async function brandStills(edit: AssemblyEdit, scratch: string, firstInput: number, logoFile: string | undefined): Promise<{ inputs: BrandStillInput[]; indexes: NonNullable<FilterGraphOptions['brandStills']> }> {
  const inputs: BrandStillInput[] = [];
  const indexes: NonNullable<FilterGraphOptions['brandStills']> = {};
  const add = async (name: string, png: Buffer, loopSeconds?: number): Promise<number> => {
    const file = path.join(scratch, `${name}.png`);
    await fs.writeFile(file, png);
    inputs.push({ file, ...(loopSeconds ? { loopSeconds } : {}) });
    return firstInput + inputs.length - 1;
  };
  const captions = captionTrackOf(edit);
  for (const [i, caption] of captions.entries()) {
    if (!captionHasStill(caption)) continue;
    const png = await textStillPng({ lines: [caption.asset.text], ...caption.textStyle, width: caption.box.width, height: caption.box.height });
    (indexes.captions ??= [])[i] = await add(`caption-${i}`, png);
  }
  const title = brandPartOf(edit, 'titleCard');
  if (title) indexes.titleCard = await add('title', await textStillPng({ lines: [title.asset.text], ...title.textStyle, width: title.box.width, height: title.box.height }));
  const logo = brandPartOf(edit, 'logo');
  const end = brandPartOf(edit, 'endCard');
  let logoPng: Buffer | null = null;
  if ((logo || end?.asset.logoSrc) && logoFile) logoPng = await fs.readFile(logoFile);
  if (logo) {
    if (!logoPng) throw new Error('renderEdit: the edit has a logo but no file was given for it');
    indexes.logo = await add('logo', await logoStillPng(logoPng, logo.box.width, logo.box.height, logo.opacity));
  }
  if (end) {
    const { width, height } = edit.output.size;
    const png = await endCardPng({
      width,
      height,
      background: end.asset.background,
      logo: end.asset.logoSrc && logoPng ? { png: logoPng, box: end.logoBox } : null,
      texts: [
        { lines: [end.asset.callToAction], ...end.callToAction.textStyle, ...end.callToAction.box },
        { lines: end.asset.contactLines, ...end.contact.textStyle, ...end.contact.box },
      ],
    });
    indexes.endCard = await add('end-card', png, end.length);
  }
  return { inputs, indexes };
}

/** The ffmpeg arguments of an edit over local input files (in the video track's order), writing `output` (and the preview). */
export function renderEditArgs(
  edit: AssemblyEdit,
  inputs: readonly string[],
  graphFile: string,
  output: string,
  preset: string,
  preview?: { overlayFile: string; output: string },
  soundtrackFile?: string,
  stills: readonly BrandStillInput[] = [],
): string[] {
  return [
    '-y',
    ...inputs.flatMap((file) => ['-i', file]),
    ...(preview ? ['-i', preview.overlayFile] : []),
    ...(edit.timeline.soundtrack && soundtrackFile ? ['-i', soundtrackFile] : []),
    ...stills.flatMap((still) => (still.loopSeconds ? ['-loop', '1', '-framerate', String(edit.output.fps), '-t', String(still.loopSeconds), '-i', still.file] : ['-i', still.file])),
    '-filter_complex_script', graphFile,
    '-map', '[vout]', ...h264(preset, 21, edit), ...audio(edit, 'aout', '192k'), output,
    ...(preview ? ['-map', '[vprev]', ...h264(PREVIEW_ENCODER.preset, PREVIEW_ENCODER.crf, edit), ...audio(edit, 'aprev', '96k'), preview.output] : []),
  ];
}

/**
 * Renders `edit` from `inputs` into `output` (H.264, yuv420p, the edit's size and frame rate; without a soundtrack no
 * audio, with one AAC stereo loudness-normalised to the soundtrack's target), and the watermarked preview when asked. The filter graph and the caption texts go through files in `scratch`: user text
 * never passes through ffmpeg's escaping.
 */
export async function renderEdit(edit: AssemblyEdit, inputs: readonly string[], output: string, scratch: string, options: RenderEditOptions): Promise<FfmpegRunStats> {
  const args = await prepareEditRender(edit, inputs, output, scratch, options);
  return runFfmpeg(args, { durationSeconds: edit.totalDuration, signal: options.signal, onProgress: options.onProgress });
}

/**
 * Everything renderEdit does before its one ffmpeg run: the preview's watermark, the stills (captions and brand
 * parts; a recorded timeline's plain captions without a box as texts for drawtext) and the filter graph written into
 * `scratch`, the soundtrack measured; answers that run's arguments (the assembly bench times them as the bare command
 * with the same filter graph).
 */
export async function prepareEditRender(edit: AssemblyEdit, inputs: readonly string[], output: string, scratch: string, options: Omit<RenderEditOptions, 'onProgress'>): Promise<string[]> {
  // the texts drawtext reads: only a recorded timeline's plain captions without a box (every other caption is a still)
  const captionFiles: Array<string | undefined> = [];
  for (const [i, caption] of captionTrackOf(edit).entries()) {
    if (captionHasStill(caption)) continue;
    const file = path.join(scratch, `caption-${i}.txt`);
    await fs.writeFile(file, caption.asset.text, 'utf8');
    captionFiles[i] = file;
  }
  let preview: { overlayFile: string; output: string } | undefined;
  const size = previewSize(edit);
  if (options.previewOutput) {
    const overlayFile = path.join(scratch, 'watermark.png');
    await fs.writeFile(overlayFile, await watermarkOverlayOnce(size));
    preview = { overlayFile, output: options.previewOutput };
  }
  let soundtrack: { input: number; measured: Awaited<ReturnType<typeof measureLoudness>> } | undefined;
  if (edit.timeline.soundtrack) {
    if (!options.soundtrackFile) throw new Error('renderEdit: the edit has a soundtrack but no file was given for it');
    // loudnorm's first pass over exactly the music that plays; the render applies it as one gain (linear mode)
    const measured = await measureLoudness(options.soundtrackFile, soundtrackMeasureFilter(edit.timeline.soundtrack), options.signal);
    soundtrack = { input: inputs.length + (preview ? 1 : 0), measured };
  }
  const firstStill = inputs.length + (preview ? 1 : 0) + (edit.timeline.soundtrack ? 1 : 0);
  const stills = await brandStills(edit, scratch, firstStill, options.logoFile);
  const graphFile = path.join(scratch, 'graph.txt');
  const graph = assemblyFilterGraph(edit, { captionFiles, preview: preview ? { overlayInput: inputs.length, ...size } : undefined, soundtrack, brandStills: stills.indexes });
  await fs.writeFile(graphFile, graph, 'utf8');
  return renderEditArgs(edit, inputs, graphFile, output, options.preset, preview, options.soundtrackFile, stills.inputs);
}
