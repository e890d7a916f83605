/** User-facing texts from the specs, verbatim. API errors and UI both use these. */
export const MSG = {
  nameEmpty: 'Name cannot be empty',
  passwordsDoNotMatch: 'Passwords do not match',
  passwordRequirements: 'Please fix the password requirements',
  loginToUpload: 'Please login to upload files',
  videoUploadsNotSupported: 'Video uploads are not supported. Please upload images only.',
  fileTooLarge: (mb: string) => `File too large: ${mb}MB. Maximum size is 150MB.`,
  promptRequired: 'Please describe how you want to transform the image',
  loginToGenerate: 'You must be logged in to generate images',
  insufficientCreditsImage:
    'Not enough credits for image generation. Please purchase more credits or wait for existing approvals to be processed.',
  rejectionStreakWarning:
    "You've rejected your last 4 items. If you reject the next one as well, you'll need to approve at least one item or wait before generating more.",
  rejectionStreakCooldown:
    'Generation temporarily paused due to repeated rejections. Approve at least one item or try again later.',
  rejectionRequiresPurchase: 'Rejections are disabled until you purchase a credit package...',
  waitForCurrentGeneration: 'Please wait for the current generation to complete before starting another.',
  failedToStartVideo: 'Failed to start video generation',
  pendingLimitReached: (limit: number) => `You have reached the maximum of ${limit} pending approvals...`,
  somethingWentWrong: 'Something went wrong. Please try again.',
  unableToLoadCredits: 'Unable to load credits',
  projectPermission: 'You do not have permission to use this project',
} as const;

export const ERROR_CODES = {
  rejectionRequiresPurchase: 'REJECTION_REQUIRES_PURCHASE',
  rejectionStreakWarning: 'REJECTION_STREAK_WARNING',
  rejectionStreakCooldown: 'REJECTION_STREAK_COOLDOWN',
  insufficientCredits: 'INSUFFICIENT_CREDITS',
  pendingLimitReached: 'PENDING_LIMIT_REACHED',
  singleClipRestriction: 'SINGLE_CLIP_RESTRICTION',
} as const;
