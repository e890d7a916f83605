import { API_ROUTE_MAX_BYTES, COMPRESSION } from '../../../domain/constants';

/**
 * The compression steps of 000 section 9, now used only for the try-it area's localStorage copy (canvasCompression.ts).
 * Project and draft uploads are not compressed: the spec compressed them because its upload route took at most
 * 4.5 MB (4718592 bytes); this API streams 150 MB, so originals are kept (docs/architecture.md "Originals").
 */
export const COMPRESSION_THRESHOLD_BYTES = API_ROUTE_MAX_BYTES;
/** 000 section 9: compression is triggered above 4 MB. */
export const COMPRESSION_TRIGGER_BYTES = COMPRESSION.triggerAboveBytes;
/** 000 section 9: the general target, for uploads that do not go through the API route. */
export const UPLOAD_COMPRESSION_TARGET_BYTES = COMPRESSION.targetBytes;

/** Where the compressed file stops: under the API route's limit when it goes through the route, else the 8 MB target. */
export function compressionTargetBytes(viaApiRoute: boolean): number {
  return viaApiRoute ? COMPRESSION_THRESHOLD_BYTES : UPLOAD_COMPRESSION_TARGET_BYTES;
}

export interface CompressionStep {
  maxSide: number;
  quality: number;
}

/**
 * Images above 4 MB are compressed (000 section 9), GIFs included (a GIF the route cannot take goes up as its
 * first frame). `thresholdBytes`, when given, is another path's own rule instead: compress from that size on
 * (the try-it area's localStorage copy, draft uploads from 4,718,592 bytes).
 */
export function needsCompression(file: { size: number; type: string }, thresholdBytes?: number): boolean {
  return thresholdBytes === undefined ? file.size > COMPRESSION_TRIGGER_BYTES : file.size >= thresholdBytes;
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
 * Tries the steps in order (by default `compressionSteps()`) until a result is under the threshold (the target); if
 * none is, the smallest result is kept (the server takes up to 150 MB). `encode` does the drawing (a canvas in the browser).
 */
export async function compressProgressively<B extends { size: number }>(
  original: B,
  encode: (step: CompressionStep) => Promise<B>,
  thresholdBytes: number = COMPRESSION_THRESHOLD_BYTES,
  steps: readonly CompressionStep[] = compressionSteps(),
): Promise<CompressionOutcome<B>> {
  let best: CompressionOutcome<B> = { blob: original, step: null, tries: 0 };
  let tries = 0;
  for (const step of steps) {
    tries++;
    const blob = await encode(step);
    if (blob.size < best.blob.size) best = { blob, step, tries };
    // a file between the trigger and the target may come out larger than it went in: then it goes as it was
    if (blob.size < thresholdBytes) return blob.size < original.size ? { blob, step, tries } : { blob: original, step: null, tries };
  }
  return { ...best, tries };
}
