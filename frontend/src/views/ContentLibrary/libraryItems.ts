import { PICTURE_ORIGINAL_MAX_BYTES } from '../../../../domain/constants';
import type { ContentItem } from '../../api/projects';

export const LIBRARY_TABS = ['all', 'renders', 'images', 'clips', 'videos'] as const;
export type LibraryTab = (typeof LIBRARY_TABS)[number];

export const TAB_LABEL: Record<LibraryTab, string> = { all: 'All', renders: 'Renders', images: 'Images', clips: 'Clips', videos: 'Videos' };

/** Upload Images shows on All and Renders only (001 section 2). */
export function tabAllowsUpload(tab: LibraryTab): boolean {
  return tab === 'all' || tab === 'renders';
}

export function itemTab(item: ContentItem): Exclude<LibraryTab, 'all'> {
  switch (item.type) {
    case 'render':
      return 'renders';
    case 'clip':
      return 'clips';
    case 'compiled_video':
      return 'videos';
    case 'ai_image':
    case 'generated_image':
      return 'images';
  }
}

export function itemsForTab(items: readonly ContentItem[], tab: LibraryTab): ContentItem[] {
  return tab === 'all' ? [...items] : items.filter((item) => itemTab(item) === tab);
}

export function libraryCounts(items: readonly ContentItem[]): Record<Exclude<LibraryTab, 'all'>, number> {
  const counts = { renders: 0, images: 0, clips: 0, videos: 0 };
  for (const item of items) counts[itemTab(item)]++;
  return counts;
}

/** The type badge (001 section 2): Clip, Video, AI Image, Render. */
export function typeBadge(item: ContentItem): string {
  switch (item.type) {
    case 'render':
      return 'Render';
    case 'clip':
      return 'Clip';
    case 'compiled_video':
      return 'Video';
    case 'ai_image':
    case 'generated_image':
      return 'AI Image';
  }
}

function ratioLabel(width: number, height: number): string {
  const named: Array<[string, number]> = [
    ['16:9', 16 / 9], ['9:16', 9 / 16], ['1:1', 1], ['4:5', 4 / 5], ['4:3', 4 / 3], ['3:2', 3 / 2], ['21:9', 21 / 9],
  ];
  const r = width / height;
  return named.reduce((best, entry) => (Math.abs(Math.log(entry[1] / r)) < Math.abs(Math.log(best[1] / r)) ? entry : best))[0];
}

/** The aspect-ratio badge: the item's stored ratio, else one derived from its dimensions, else none. */
export function aspectBadge(item: ContentItem): string | null {
  const { aspect_ratio: ratio, width, height } = item.data;
  if (ratio && ratio.trim()) return ratio;
  if (typeof width === 'number' && typeof height === 'number' && width > 0 && height > 0) return ratioLabel(width, height);
  return null;
}

export function isVideo(item: ContentItem): boolean {
  return item.type === 'clip' || item.type === 'compiled_video';
}

/** How the delete confirmation and its toasts name the item (000 section 8). */
export function deleteWord(item: ContentItem): 'render' | 'clip' | 'AI image' | 'video' {
  switch (item.type) {
    case 'render':
      return 'render';
    case 'clip':
      return 'clip';
    case 'compiled_video':
      return 'video';
    case 'ai_image':
    case 'generated_image':
      return 'AI image';
  }
}

export function deleteTexts(item: ContentItem): { confirm: string; success: string; failure: string } {
  const word = deleteWord(item);
  const capital = word.charAt(0).toUpperCase() + word.slice(1);
  return {
    confirm: `Are you sure you want to delete this ${word}? This action cannot be undone.`,
    success: `${capital} deleted successfully`,
    failure: `Failed to delete ${word}`,
  };
}

/**
 * Whether the item's original may be shown as a picture: it is known to be at most PICTURE_ORIGINAL_MAX_BYTES, or it
 * is not a render and its size is not recorded (generated items, of provider size). A render's original (up to 150 MB)
 * is otherwise only downloaded.
 */
function originalShowable(item: ContentItem): boolean {
  const size = item.data.file_size;
  if (typeof size === 'number' && size > 0) return size <= PICTURE_ORIGINAL_MAX_BYTES;
  return item.source !== 'renders';
}

/**
 * The picture of a grid tile: the thumbnail, else the preview, else the original while it is small; null (a
 * placeholder) while a large render's copies are being made. Videos show their own player.
 */
export function tilePicture(item: ContentItem): string | null {
  if (item.data.thumbnail_url) return item.data.thumbnail_url;
  if (isVideo(item)) return null;
  return item.data.preview_url ?? (item.signed_url && originalShowable(item) ? item.signed_url : null);
}

/**
 * The picture of the item dialog: the preview (at most 2048 px), else the original while it is small, else the
 * thumbnail until the preview is made; never a large original (Download still gets it).
 */
export function dialogPicture(item: ContentItem): string | null {
  if (item.data.preview_url) return item.data.preview_url;
  if (item.signed_url && originalShowable(item)) return item.signed_url;
  return item.data.thumbnail_url;
}

/** The first 6 thumbnails load eagerly (001 section 9), the rest when scrolled near. */
export const EAGER_THUMBNAILS = 6;

/** A download's file name: the item's name, with the stored file's extension when the name has none. */
export function downloadName(item: ContentItem): string {
  const ext = /\.([a-z0-9]+)$/i.exec(item.data.file_url)?.[1];
  const name = item.data.name.replace(/[\\/:*?"<>|]+/g, '_');
  return ext && !/\.[a-z0-9]{2,4}$/i.test(name) ? `${name}.${ext}` : name;
}

/** A clip's or video's length as m:ss (a 5 s clip shows 0:05). */
export function durationText(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/** The masonry's columns (as the grid's CSS `columns: 260px` with a 1rem gap laid them out): as many 260 px columns as fit. */
export const GRID_MIN_COLUMN = 260;
export const GRID_GAP = 16;

export function gridColumns(width: number): { count: number; width: number } {
  const count = Math.max(1, Math.floor((width + GRID_GAP) / (GRID_MIN_COLUMN + GRID_GAP)));
  return { count, width: Math.max(0, (width - (count - 1) * GRID_GAP) / count) };
}

const NAMED_SHAPES: Record<string, number> = { landscape: 16 / 9, portrait: 9 / 16, square: 1 };
/** An item whose shape is not known shows at 4:3 (its picture covers the tile). */
const DEFAULT_ASPECT = 4 / 3;

/**
 * Width over height of the item's tile picture: its pixel size, else its stored ratio ('16:9', 'portrait' ...), else
 * 4:3. Known before the picture loads, so each tile keeps its own aspect and its height never jumps.
 */
export function mediaAspect(item: ContentItem): number {
  const { width, height } = item.data;
  if (typeof width === 'number' && typeof height === 'number' && width > 0 && height > 0) return width / height;
  const ratio = (aspectBadge(item) ?? '').trim().toLowerCase();
  const match = /^(\d+(?:\.\d+)?)\s*[:x/]\s*(\d+(?:\.\d+)?)$/.exec(ratio);
  if (match && Number(match[1]) > 0 && Number(match[2]) > 0) return Number(match[1]) / Number(match[2]);
  return NAMED_SHAPES[ratio] ?? DEFAULT_ASPECT;
}

/** The shortest a tile's picture is drawn (a very wide panorama still shows a strip you can click). */
export const MEDIA_MIN_HEIGHT = 80;
/** The name row under the picture with its borders, before the browser measures the real one. */
const CARD_BODY_ESTIMATE = 54;

/** A tile's height at a column width, as the grid lays it out before measuring it. */
export function tileHeightEstimate(item: ContentItem, columnWidth: number): number {
  return Math.max(MEDIA_MIN_HEIGHT, columnWidth / mediaAspect(item)) + CARD_BODY_ESTIMATE;
}

/** A stable key for an item across re-reads (ids are unique per table). */
export function itemKey(item: ContentItem): string {
  return `${item.source}:${item.data.id}`;
}
