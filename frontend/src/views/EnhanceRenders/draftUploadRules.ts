/**
 * Draft upload rules of spec 001 sections 5 and 9: 4 images per draft, 5 files per drop, 3 uploads at a time. Files go
 * up as they are (no compression, unlike the spec: the originals are kept, docs/architecture.md). Pure.
 */
import { DRAFT_LIMITS, ENHANCE_MSG } from '../../../../domain/enhanceRenders';
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
