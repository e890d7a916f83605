/**
 * Draft upload rules of spec 001 sections 5 and 9: 4 images per draft, 5 files per drop, compression from
 * 4,718,592 bytes to at most 4 MB (longest side 1920 px, quality 0.8), 3 uploads at a time. Pure.
 */
import { DRAFT_LIMITS, ENHANCE_MSG } from '../../../../domain/enhanceRenders';
import type { CompressionStep } from '../../upload/compressionPlan';
import { dropZoneError, type FileLike } from '../../upload/fileChecks';

export type DraftUploadPlan<F> =
  | { ok: false; error: string }
  | { ok: true; files: F[]; notice: string | null };

/**
 * What happens to files dropped or picked for a draft holding `existing` images: refused (no draft open, more
 * than 5 files, a wrong type, a full draft) or taken up to the 4-image limit, the rest ignored with a notice.
 */
export function planDraftUpload<F extends FileLike>(draftOpen: boolean, existing: number, files: readonly F[]): DraftUploadPlan<F> {
  if (!draftOpen) return { ok: false, error: ENHANCE_MSG.openDraftFirst };
  const problem = dropZoneError(files, DRAFT_LIMITS.dropZoneMaxFiles);
  if (problem) return { ok: false, error: problem };
  const room = Math.max(0, DRAFT_LIMITS.maxImagesPerDraft - existing);
  if (room === 0) return { ok: false, error: ENHANCE_MSG.limitReached };
  if (files.length <= room) return { ok: true, files: [...files], notice: null };
  return { ok: true, files: files.slice(0, room), notice: ENHANCE_MSG.onlyMoreAllowed(room, files.length - room) };
}

/** Files of 4,718,592 bytes or more are compressed before they go up; GIFs (maybe animated) never are. */
export function needsDraftCompression(file: { size: number; type: string }): boolean {
  return file.size >= DRAFT_LIMITS.compressionThresholdBytes && file.type !== 'image/gif';
}

/**
 * The tries: 1920 px at quality 0.8 first (the spec's setting); should that still exceed 4 MB (a very detailed
 * image), lower quality at the same size, then a smaller side, until one fits.
 */
export function draftCompressionSteps(): CompressionStep[] {
  return [
    { maxSide: DRAFT_LIMITS.compressionMaxSide, quality: DRAFT_LIMITS.compressionQuality },
    { maxSide: DRAFT_LIMITS.compressionMaxSide, quality: 0.65 },
    { maxSide: 1600, quality: 0.6 },
  ];
}

/** The canvas plan for compressForUpload: the steps above, each result to stay under 4 MB. */
export const DRAFT_COMPRESSION_PLAN = { steps: draftCompressionSteps(), targetBytes: DRAFT_LIMITS.compressionTargetBytes } as const;
