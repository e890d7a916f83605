import { defaultRangeExtractor, useWindowVirtualizer, type Range } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type FocusEvent, type ReactElement } from 'react';
import type { ContentItem } from '../../api/projects';
import type { CardPlacement } from './LibraryItemCard';
import { GRID_GAP, gridColumns, itemKey, tileHeightEstimate } from './libraryItems';

/** Tiles drawn past each edge of the window, per column: scrolling a little never shows an empty gap. */
const OVERSCAN = 4;

/**
 * The library's masonry grid, virtualised: a project may hold 1000 items, and only the tiles near the window are in
 * the page. Columns follow the container width like the CSS `columns: 260px` grid did; each item goes to the
 * shortest column, at its own aspect (known from its data, so nothing jumps when pictures load). The tiles stay in
 * list order in the page, so Tab walks them in order (the browser scrolls the next one into view and the grid draws
 * it); the tile that last held focus is kept in the page while it is scrolled away, so focus and a dialog's return
 * to its opener are never lost.
 */
export function LibraryGrid({
  items,
  renderItem,
}: {
  items: readonly ContentItem[];
  renderItem: (item: ContentItem, placement: CardPlacement) => ReactElement;
}): ReactElement {
  const listRef = useRef<HTMLUListElement>(null);
  const [box, setBox] = useState({ width: 0, top: 0 });
  const focused = useRef<number | null>(null);

  // the grid's width sets the columns; its distance from the page top is the virtualiser's scroll margin
  useLayoutEffect(() => {
    const list = listRef.current;
    if (!list) return;
    const measure = () => {
      const width = list.clientWidth;
      const top = Math.round(list.getBoundingClientRect().top + window.scrollY);
      setBox((current) => (current.width === width && current.top === top ? current : { width, top }));
    };
    measure();
    // what sits above the grid (header, tabs, upload area) changes its parent's size when it grows or shrinks
    const observer = new ResizeObserver(measure);
    observer.observe(list);
    if (list.parentElement) observer.observe(list.parentElement);
    return () => observer.disconnect();
  }, []);

  const columns = gridColumns(box.width);
  const getItemKey = useCallback((index: number) => itemKey(items[index]), [items]);
  const estimateSize = useCallback((index: number) => tileHeightEstimate(items[index], columns.width), [items, columns.width]);
  const rangeExtractor = useCallback((range: Range) => {
    const indexes = defaultRangeExtractor(range);
    const kept = focused.current;
    if (kept !== null && kept < range.count && !indexes.includes(kept)) {
      indexes.push(kept);
      indexes.sort((a, b) => a - b);
    }
    return indexes;
  }, []);

  const virtualizer = useWindowVirtualizer({
    count: box.width > 0 ? items.length : 0,
    estimateSize,
    getItemKey,
    rangeExtractor,
    lanes: columns.count,
    gap: GRID_GAP,
    overscan: OVERSCAN,
    scrollMargin: box.top,
  });

  // a new column width changes every tile's height, and another list (a tab, a re-read) other tiles at each index:
  // forget the measured heights and the columns chosen for the old layout
  useEffect(() => {
    virtualizer.measure();
  }, [virtualizer, columns.width, items]);

  const onFocus = (event: FocusEvent<HTMLUListElement>) => {
    const tile = (event.target as HTMLElement).closest<HTMLElement>('[data-index]');
    if (tile) focused.current = Number(tile.dataset.index);
  };

  return (
    <ul ref={listRef} className="library-grid" aria-label="Content" style={{ height: virtualizer.getTotalSize() }} onFocus={onFocus}>
      {virtualizer.getVirtualItems().map((tile) =>
        renderItem(items[tile.index], {
          index: tile.index,
          setSize: items.length,
          left: tile.lane * (columns.width + GRID_GAP),
          top: tile.start - box.top,
          width: columns.width,
          measureRef: virtualizer.measureElement,
        }),
      )}
    </ul>
  );
}
