import { API_ROUTE_MAX_BYTES, COMPRESSION } from '../../../domain/constants';

/** Files of 4.5 MB (4718592 bytes) or more are compressed in the browser before they are uploaded. */
export const COMPRESSION_THRESHOLD_BYTES = API_ROUTE_MAX_BYTES;

export interface CompressionStep {
  maxSide: number;
  quality: number;
}

/**
 * GIFs may be animated: flattening them to one frame would lose content, so they go up as they are.
 * `thresholdBytes` is lower where the result must fit somewhere smaller (the try-it area's localStorage).
 */
export function needsCompression(file: { size: number; type: string }, thresholdBytes: number = COMPRESSION_THRESHOLD_BYTES): boolean {
  return file.size >= thresholdBytes && file.type !== 'image/gif';
}

/**
 * The progressive tries: longest side 2048 at quality 0.8, then each try 0.15 less quality and 512 px less side
 * (never under 1024), at most 3 tries.
 */
export function compressionSteps(): CompressionStep[] {
  const steps: CompressionStep[] = [];
  for (let i = 0; i < COMPRESSION.tries; i++) {
    steps.push({
      maxSide: Math.max(COMPRESSION.sideFloor, COMPRESSION.maxSide - i * COMPRESSION.sideStep),
      quality: Math.round((COMPRESSION.quality - i * COMPRESSION.qualityStep) * 100) / 100,
    });
  }
  return steps;
}

/** The size to draw at: the longest side brought down to `maxSide`, never enlarged. */
export function scaledSize(width: number, height: number, maxSide: number): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

export interface CompressionOutcome<B> {
  blob: B;
  step: CompressionStep | null;
  tries: number;
}

/**
 * Tries the steps in order until a result is under the threshold; if none is, the smallest result is kept
 * (the server takes up to 150 MB). `encode` does the drawing (a canvas in the browser).
 */
export async function compressProgressively<B extends { size: number }>(
  original: B,
  encode: (step: CompressionStep) => Promise<B>,
  thresholdBytes: number = COMPRESSION_THRESHOLD_BYTES,
): Promise<CompressionOutcome<B>> {
  let best: CompressionOutcome<B> = { blob: original, step: null, tries: 0 };
  let tries = 0;
  for (const step of compressionSteps()) {
    tries++;
    const blob = await encode(step);
    if (blob.size < best.blob.size) best = { blob, step, tries };
    if (blob.size < thresholdBytes) return { blob, step, tries };
  }
  return { ...best, tries };
}
