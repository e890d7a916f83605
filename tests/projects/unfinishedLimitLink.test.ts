/**
 * The upload results panel offers "Show unfinished uploads" beside the refusals of the unfinished-upload limits: the
 * front end recognises them by the server's own texts (domain/uploadLimits.ts), and nothing else.
 */
import { MSG } from '../../domain/messages';
import { isUnfinishedUploadLimit, UPLOAD_LIMIT_MSG } from '../../domain/uploadLimits';

it('recognises both limits of unfinished uploads, and no other refusal', () => {
  expect(isUnfinishedUploadLimit(UPLOAD_LIMIT_MSG.tusUploads(10, 24))).toBe(true);
  expect(isUnfinishedUploadLimit(UPLOAD_LIMIT_MSG.tusBytes(1024 ** 3, 900 * 1024 ** 2, 150 * 1024 ** 2, 24))).toBe(true);
  for (const other of [MSG.fileTooLarge('151.00'), MSG.videoUploadsNotSupported, 'Upload failed. Please try again.']) expect(isUnfinishedUploadLimit(other)).toBe(false);
});
