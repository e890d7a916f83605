/** Business constants from the specs (000 section 9, 001 section 9) and DESIGN.md "Credits". Pure: imported by api, activities, workflows and frontend. */

export const NEW_PROFILE_CREDITS = 5;

export type ContentType = 'image' | 'clip' | 'assembly';

export const CREDIT_COST: Record<ContentType, number> = { image: 1, clip: 4, assembly: 0 };
/** Business figures recorded in ledger metadata for reporting; they never change a balance. */
export const REJECTION_COST: Record<ContentType, number> = { image: 10, clip: 75, assembly: 20 };
export const REAL_MONEY_COST: Record<ContentType, number> = { image: 0.132, clip: 0.989, assembly: 0.25 };
export const CREDIT_VALUE = 0.132;

export const PENDING_LIMIT_MIN = 1;
export const PENDING_LIMIT_MAX = 5;
export const PENDING_LIMIT_DEFAULT = 5;

export const REJECTION_STREAK_WARNING_AT = 4;
export const REJECTION_STREAK_COOLDOWN_AT = 5;
export const REJECTION_COOLDOWN_MS = 60 * 60 * 1000;

export const TRANSACTIONS_PAGE_SIZE = 50;
export const LIBRARY_PER_TABLE = 500;
export const LIBRARY_MAX_ITEMS = 1000;
/** The paged content listing (?limit=&cursor=): items per page when not asked, and the most a page may hold. */
export const LIBRARY_PAGE_DEFAULT = 100;
export const LIBRARY_PAGE_MAX = 200;

export const MAX_UPLOAD_BYTES = 157286400;
/**
 * The largest original a picture in the app may load when no derived copy (thumbnail, preview) of it exists: larger
 * originals (up to MAX_UPLOAD_BYTES) are only downloaded, never shown as they are.
 */
export const PICTURE_ORIGINAL_MAX_BYTES = 4 * 1024 * 1024;
export const API_ROUTE_MAX_BYTES = 4718592;
export const DROP_ZONE_MAX_FILES = 10;
export const UPLOAD_BATCH_SIZE = 3;
export const UPLOAD_BATCH_PAUSE_MS = 500;
export const UPLOAD_MAX_ATTEMPTS = 3;
export const UPLOAD_RETRY_BASE_MS = 2000;
export const UPLOAD_RETRY_MAX_MS = 10000;
export const UPLOAD_TIMEOUT_MS = 30000;
/** 000 section 9: images above 4 MB are compressed, towards 8 MB; a file bound for the upload API route must end under API_ROUTE_MAX_BYTES. */
export const COMPRESSION = {
  triggerAboveBytes: 4 * 1024 * 1024,
  targetBytes: 8 * 1024 * 1024,
  maxSide: 2048,
  quality: 0.8,
  tries: 3,
  qualityStep: 0.15,
  sideStep: 512,
  sideFloor: 1024,
} as const;
export const UPLOAD_MIME_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

export const CLIP_DURATION_SECONDS = 5;
export const CLIP_FPS = 30;
export const CONTENT_CACHE_MS = 30000;
export const CREDIT_REFRESH_DELAY_MS = 1000;

export const VIDEO_EFFECTS = ['Bring to Life', 'Walk Through', 'Day to Night', 'Drone Shot', 'Zoom In', 'Pan Left', 'Pan Right'] as const;
export type VideoEffect = (typeof VIDEO_EFFECTS)[number];
export const MAIN_SCREEN_EFFECTS: readonly VideoEffect[] = ['Bring to Life', 'Walk Through', 'Day to Night', 'Drone Shot'];

export const PLATFORMS = ['YouTube', 'Facebook', 'TikTok', 'Instagram', 'Square'] as const;
export type Platform = (typeof PLATFORMS)[number];
export const PLATFORM_ASPECT: Record<Platform, '16:9' | '9:16' | '1:1'> = {
  YouTube: '16:9',
  Facebook: '16:9',
  TikTok: '9:16',
  Instagram: '9:16',
  Square: '1:1',
};

export const CIRCUIT_BREAKER_DEFAULTS = {
  failureThreshold: 5,
  callTimeoutMs: 30000,
  resetTimeoutMs: 60000,
  windowMs: 5 * 60 * 1000,
  halfOpenMaxCalls: 3,
} as const;

export interface CreditPackage {
  id: string;
  name: string;
  totalCredits: number;
  priceCents: number;
  isPopular: boolean;
}
export const CREDIT_PACKAGES: readonly CreditPackage[] = [
  { id: 'small', name: 'Small Project', totalCredits: 12, priceCents: 25000, isPopular: false },
  { id: 'medium', name: 'Medium Project', totalCredits: 30, priceCents: 64900, isPopular: true },
  { id: 'large', name: 'Large Project', totalCredits: 72, priceCents: 119500, isPopular: false },
];
