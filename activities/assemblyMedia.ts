/**
 * ffmpeg work of the assembly workflow: render an edit (domain/assemblyTimeline.ts) with its one filter graph, the
 * video and its watermarked preview from the same decoded frames in one run. No policy: the activities decide what
 * to render and where it goes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { assemblyFilterGraph, captionTrackOf, previewSize, type AssemblyEdit } from '../domain/assemblyTimeline';
import { runFfmpeg, type FfmpegRunStats } from '../providers/media/ffmpeg';
import { watermarkOverlayOnce } from './clipMedia';

export interface RenderEditOptions {
  preset: string;
  /** Also write the watermarked preview (half size) here. */
  previewOutput?: string;
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
  return ['-c:v', 'libx264', '-preset', preset, '-crf', String(crf), '-pix_fmt', 'yuv420p', '-r', String(edit.output.fps), '-movflags', '+faststart', '-an', '-t', String(edit.totalDuration)];
}

/** The ffmpeg arguments of an edit over local input files (in the video track's order), writing `output` (and the preview). */
export function renderEditArgs(
  edit: AssemblyEdit,
  inputs: readonly string[],
  graphFile: string,
  output: string,
  preset: string,
  preview?: { overlayFile: string; output: string },
): string[] {
  return [
    '-y',
    ...inputs.flatMap((file) => ['-i', file]),
    ...(preview ? ['-i', preview.overlayFile] : []),
    '-filter_complex_script', graphFile,
    '-map', '[vout]', ...h264(preset, 21, edit), output,
    ...(preview ? ['-map', '[vprev]', ...h264(PREVIEW_ENCODER.preset, PREVIEW_ENCODER.crf, edit), preview.output] : []),
  ];
}

/**
 * Renders `edit` from `inputs` into `output` (H.264, yuv420p, the edit's size and frame rate, no audio), and the
 * watermarked preview when asked. The filter graph and the caption texts go through files in `scratch`: user text
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
  const graphFile = path.join(scratch, 'graph.txt');
  const graph = assemblyFilterGraph(edit, { captionFiles, preview: preview ? { overlayInput: inputs.length, ...size } : undefined });
  await fs.writeFile(graphFile, graph, 'utf8');
  return runFfmpeg(renderEditArgs(edit, inputs, graphFile, output, options.preset, preview), {
    durationSeconds: edit.totalDuration,
    signal: options.signal,
    onProgress: options.onProgress,
  });
}
