/**
 * The try-it flow's texts and limits (spec 000 sections 5, 8 and 9; 001 section 2). Pure: imported by the
 * onboarding workflow, the API and the landing page's local storage rules.
 */

export const TRY_IT_MESSAGES = {
  noData: 'No try-it data found',
  profileFailed: 'Failed to create user profile',
  projectFailed: 'Failed to create project',
  uploadFailed: 'File upload failed, but project was created successfully',
  maxImages: 'Maximum 3 images allowed. Please clear existing images first.',
  rateLimited: 'Upload rate limit exceeded. Please wait before uploading again.',
  invalidType: 'Invalid file type. Please upload a JPG, PNG, GIF or WebP image.',
} as const;

/** How many images the browser keeps before signup. */
export const TRY_IT_MAX_IMAGES = 3;
/** At most this many picks per minute. */
export const TRY_IT_UPLOADS_PER_MINUTE = 5;
export const TRY_IT_RATE_WINDOW_MS = 60 * 1000;
/** Upload attempts are remembered this long, then forgotten. */
export const TRY_IT_ATTEMPT_MEMORY_MS = 5 * 60 * 1000;
/** A saved image lasts 2 hours. */
export const TRY_IT_IMAGE_TTL_MS = 7_200_000;
/** The saved effect and platform (and the welcome dialog that shows them) last 24 hours. */
export const TRY_IT_SELECTION_TTL_MS = 24 * 60 * 60 * 1000;
/** The landing page's text beside the try-it picker (001 section 2). */
export const TRY_IT_ACCEPT_TEXT = 'JPG, PNG, WEBP up to 150MB';

/** Longest try-it file name the API takes; longer names are refused, not cut. */
export const TRY_IT_FILE_NAME_MAX_LENGTH = 255;
