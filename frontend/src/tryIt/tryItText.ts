/** How the try-it area and the welcome dialog name things. */
import { PLATFORM_ASPECT, type Platform } from '../../../domain/constants';

/** The try-it list names the square option with its ratio. */
export function platformLabel(platform: Platform): string {
  return platform === 'Square' ? 'Square 1:1' : platform;
}

/** "YouTube (16:9)", "Square (1:1)". */
export function formatLabel(platform: Platform): string {
  return `${platform} (${PLATFORM_ASPECT[platform]})`;
}

/** 812 bytes -> "812 B", 52 340 -> "51.1 KB", 2 621 440 -> "2.5 MB". */
export function formatFileSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return 'Size unknown';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
