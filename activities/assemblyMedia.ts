/**
 * ffmpeg work of the assembly workflow: render an edit (domain/assemblyTimeline.ts) with its one filter graph, the
 * video and its watermarked preview from the same decoded frames in one run. No policy: the activities decide what
 * to render and where it goes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { assemblyFilterGraph, captionTrackOf, previewSize, soundtrackMeasureFilter, type AssemblyEdit } from '../domain/assemblyTimeline';
import { runFfmpeg, type FfmpegRunStats } from '../providers/media/ffmpeg';
import { measureLoudness } from '../providers/media/loudness';
import { watermarkOverlayOnce } from './clipMedia';

export interface RenderEditOptions {
  preset: string;
  /** Also write the watermarked preview (half size) here. */
  previewOutput?: string;
  /** A local copy of the soundtrack's file; needed when the edit has a soundtrack. */
  soundtrackFile?: string;
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

/** The ffmpeg arguments of an edit over local input files (in the video track's order), writing `output` (and the preview). */
export function renderEditArgs(
  edit: AssemblyEdit,
  inputs: readonly string[],
  graphFile: string,
  output: string,
  preset: string,
  preview?: { overlayFile: string; output: string },
  soundtrackFile?: string,
): string[] {
  return [
    '-y',
    ...inputs.flatMap((file) => ['-i', file]),
    ...(preview ? ['-i', preview.overlayFile] : []),
    ...(edit.timeline.soundtrack && soundtrackFile ? ['-i', soundtrackFile] : []),
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
  const captionFiles: string[] = [];
  for (const [i, caption] of captionTrackOf(edit).entries()) {
    const file = path.join(scratch, `caption-${i}.txt`);
    await fs.writeFile(file, caption.asset.text, 'utf8');
    captionFiles.push(file);
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
  const graphFile = path.join(scratch, 'graph.txt');
  const graph = assemblyFilterGraph(edit, { captionFiles, preview: preview ? { overlayInput: inputs.length, ...size } : undefined, soundtrack });
  await fs.writeFile(graphFile, graph, 'utf8');
  return runFfmpeg(renderEditArgs(edit, inputs, graphFile, output, options.preset, preview, options.soundtrackFile), {
    durationSeconds: edit.totalDuration,
    signal: options.signal,
    onProgress: options.onProgress,
  });
}
