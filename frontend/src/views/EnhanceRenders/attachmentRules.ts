/**
 * Which reference attachments a run may carry (spec 001 sections 5 and 9): only Nano Banana Edit (3) and Style
 * Transfer (6) take them, none while Sync Images is on, and at most 4 are sent. Pure.
 */

import { DRAFT_LIMITS, ENHANCE_MSG } from '../../../../domain/enhanceRenders';

/** The part of a model option these rules read. */
export interface AttachmentModel {
  allowsAttachments: boolean;
  maxReferences: number;
}

/** Why attachments cannot be added now, or null when they can. */
export function attachmentBlock(model: AttachmentModel, syncOn: boolean): string | null {
  if (syncOn) return ENHANCE_MSG.attachmentsDisabledInSync;
  if (!model.allowsAttachments || model.maxReferences <= 0) return ENHANCE_MSG.attachmentsModelOnly;
  return null;
}

/** Only image files pasted or dropped count as attachments. */
export function isAttachableFile(file: { type: string }): boolean {
  return file.type.startsWith('image/');
}

/**
 * How many of `incoming` image files may be added next to `existing` attachments: the rest is refused with the
 * limit message.
 */
export function attachmentRoom(model: AttachmentModel, syncOn: boolean, existing: number, incoming: number): { take: number; message: string | null } {
  const block = attachmentBlock(model, syncOn);
  if (block) return { take: 0, message: block };
  const room = Math.max(0, model.maxReferences - existing);
  if (incoming <= room) return { take: incoming, message: null };
  return { take: room, message: ENHANCE_MSG.maxAttachments(model.maxReferences) };
}

/**
 * The attachment URLs a run sends: none in Sync Images (the pinned image is the reference, named by its id);
 * otherwise the attachments used for the look (when the model takes attachments), never more than the model's
 * limit nor more than 4.
 */
export function referencesToSend(model: AttachmentModel, syncOn: boolean, attachments: ReadonlyArray<{ url: string; useForLook: boolean }>): string[] {
  if (syncOn) return [];
  if (!model.allowsAttachments) return [];
  return attachments
    .filter((a) => a.useForLook)
    .map((a) => a.url)
    .slice(0, Math.min(model.maxReferences, DRAFT_LIMITS.maxReferencesSent));
}

/** Said near Run when Style Transfer has references but none of them is used for the look. */
export const NO_REFERENCE_FOR_LOOK = 'Tick “Use for look” on a reference image for Style Transfer';

/**
 * Why Run waits for a reference, or null when it need not: Style Transfer takes its look only from references, so a
 * run without one the look is taken from would be refused by the server (STYLE_NEEDS_REFERENCE). Said beside Run,
 * which stays disabled until a reference is there.
 */
export function missingReference(model: AttachmentModel & { mode: string }, syncOn: boolean, attachments: ReadonlyArray<{ url: string; useForLook: boolean }>): string | null {
  if (syncOn || model.mode !== 'style_transfer') return null;
  if (referencesToSend(model, syncOn, attachments).length > 0) return null;
  return attachments.length > 0 ? NO_REFERENCE_FOR_LOOK : ENHANCE_MSG.styleNeedsReference;
}
