/**
 * The texts of the upload limits (services/content/uploadLimits.ts enforces them), here so the front end recognises
 * the refusals it has a way out of.
 */
import { ENHANCE_MSG } from './enhanceRenders';

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(2);
}

function hoursText(hours: number): string {
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

export const UPLOAD_LIMIT_MSG = {
  tusUploads: (max: number, expirationHours: number) =>
    `Too many unfinished uploads: at most ${max} at once. Finish or cancel one before starting another (an unfinished upload is removed ${hoursText(expirationHours)} after it starts).`,
  tusBytes: (maxBytes: number, heldBytes: number, size: number, expirationHours: number) =>
    `Unfinished uploads may hold at most ${megabytes(maxBytes)}MB at once: ${megabytes(heldBytes)}MB are in unfinished uploads and this file is ${megabytes(size)}MB. Finish or cancel one first (an unfinished upload is removed ${hoursText(expirationHours)} after it starts).`,
  draftImages: ENHANCE_MSG.limitReached,
  draftReferences: (max: number, minutes: number) =>
    `Limit reached: maximum ${max} attachments waiting in a draft. Run a job with them, or upload more once unused ones are removed (${minutes} minutes after upload).`,
  draftWaiting: (max: number, minutes: number) =>
    `Too many draft uploads not yet added to a draft: at most ${max} at once. Add them to their draft, or upload more once unused ones are removed (${minutes} minutes after upload).`,
};

/** The refusals of the unfinished-upload limits: their way out is the upload area's list of unfinished uploads. */
export function isUnfinishedUploadLimit(message: string): boolean {
  return message.startsWith('Too many unfinished uploads') || message.startsWith('Unfinished uploads may hold');
}
