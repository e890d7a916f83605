/**
 * Clip orientation rule of spec 001 section 5, in its stated order: the file name (portrait, vertical, 9-16 /
 * landscape, horizontal, 16-9), then the analysis aspectRatio (16:9 and 4:3 landscape, 9:16 portrait), then
 * aspect_ratio as text or number (above 1.2 landscape, below 0.8 portrait; the words portrait and landscape as
 * themselves), else landscape. Used by the Video Assembly view and by the assembly API and workflow alike.
 */
export type Orientation = 'portrait' | 'landscape';

export const ORIENTATIONS: readonly Orientation[] = ['landscape', 'portrait'];

export interface OrientationInput {
  fileName?: string | null;
  analysisAspectRatio?: string | null;
  aspectRatio?: string | number | null;
}

function ratioValue(value: string | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*[:/x]\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
  if (m) return Number(m[1]) / Number(m[2]);
  const n = Number(value);
  return Number.isFinite(n) && value.trim() !== '' ? n : null;
}

export function clipOrientation(input: OrientationInput): Orientation {
  const name = (input.fileName ?? '').toLowerCase();
  if (/portrait|vertical|9-16/.test(name)) return 'portrait';
  if (/landscape|horizontal|16-9/.test(name)) return 'landscape';
  const analysis = input.analysisAspectRatio?.trim();
  if (analysis === '16:9' || analysis === '4:3') return 'landscape';
  if (analysis === '9:16') return 'portrait';
  if (input.aspectRatio !== undefined && input.aspectRatio !== null) {
    const text = String(input.aspectRatio).trim().toLowerCase();
    if (text === 'portrait') return 'portrait';
    if (text === 'landscape') return 'landscape';
    const r = ratioValue(input.aspectRatio);
    if (r !== null && r > 1.2) return 'landscape';
    if (r !== null && r < 0.8) return 'portrait';
  }
  return 'landscape';
}

/** Nearest named ratio for stored width/height (the ratios the specs list). */
const NAMED_RATIOS: Array<[string, number]> = [
  ['16:9', 16 / 9], ['9:16', 9 / 16], ['1:1', 1], ['4:5', 4 / 5], ['4:3', 4 / 3], ['3:2', 3 / 2], ['21:9', 21 / 9],
];
export function aspectRatioLabel(width: number, height: number): string {
  const r = width / height;
  let best = NAMED_RATIOS[0];
  for (const entry of NAMED_RATIOS) if (Math.abs(Math.log(entry[1] / r)) < Math.abs(Math.log(best[1] / r))) best = entry;
  return best[0];
}
