import { useEffect, useState } from 'react';
import { fetchProjectContent, type ContentItem } from '../api/projects';

/** The library item a generation screen works from: a render, or an AI image (`?render=` / `?image=`). */
export interface SourceItemRef {
  kind: 'render' | 'image';
  id: string;
}

function findSourceItem(items: readonly ContentItem[], ref: SourceItemRef): ContentItem | null {
  return items.find((item) => item.data.id === ref.id && (ref.kind === 'render' ? item.type === 'render' : item.source === 'images')) ?? null;
}

/**
 * The source item read from its project's content: undefined while loading, null when there is no project or
 * source, the item is not in the project, or the content could not be read.
 */
export function useSourceItem(projectId: string | null, source: SourceItemRef | null): ContentItem | null | undefined {
  const [item, setItem] = useState<ContentItem | null | undefined>(undefined);

  useEffect(() => {
    let live = true;
    setItem(undefined);
    if (!projectId || !source) {
      setItem(null);
      return;
    }
    fetchProjectContent(projectId).then(
      (items) => live && setItem(findSourceItem(items, source)),
      () => live && setItem(null),
    );
    return () => {
      live = false;
    };
  }, [projectId, source]);

  return item;
}
