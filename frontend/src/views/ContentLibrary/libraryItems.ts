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
