/** The image history dialog of spec 001 section 2: up to 8 versions, labelled Current, Previous, Back N. */
import { DRAFT_LIMITS, versionLabel } from '../../../../domain/enhanceRenders';

export { versionLabel };

export interface DraftVersion {
  url: string;
  label: string;
  current: boolean;
}

/**
 * The versions to list, newest first: the current file, then the history entries (newest first, as the server
 * keeps them), without repeats, at most 8.
 */
export function draftVersions(currentUrl: string, history: ReadonlyArray<{ url?: unknown }>): DraftVersion[] {
  const urls: string[] = [currentUrl];
  for (const entry of history) {
    const url = typeof entry?.url === 'string' ? entry.url : null;
    if (url && !urls.includes(url)) urls.push(url);
  }
  return urls.slice(0, DRAFT_LIMITS.historyVersions).map((url, index) => ({ url, label: versionLabel(index), current: index === 0 }));
}
