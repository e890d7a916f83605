import { memo, type ReactElement, type Ref } from 'react';
import type { ContentItem } from '../../api/projects';
import { Icon } from '../../components/Icon';
import { countText } from '../../components/countText';
import { InlineName } from '../Projects/InlineName';
import { aspectBadge, durationText, isVideo, mediaAspect, tilePicture, typeBadge } from './libraryItems';

/**
 * Where the virtual grid puts the tile: its index (for measuring and the list position), the size of the list, and
 * its box in pixels. Plain values, so a tile that did not move is not drawn again (the card is memoised).
 */
export interface CardPlacement {
  index: number;
  setSize: number;
  left: number;
  top: number;
  width: number;
  measureRef: Ref<HTMLLIElement>;
}

interface LibraryItemCardProps extends CardPlacement {
  item: ContentItem;
  eager: boolean;
  onOpen: (item: ContentItem) => void;
  onDownload: (item: ContentItem) => void;
  onDelete: (item: ContentItem) => void;
  onRename: (item: ContentItem, name: string) => Promise<void>;
  /** a role that only reads (a viewer): the name is not editable and there is no Delete */
  readOnly?: boolean;
}

/** One masonry tile: thumbnail with type and aspect badges, inline-editable name, download and delete. */
export const LibraryItemCard = memo(function LibraryItemCard({
  item,
  index,
  setSize,
  left,
  top,
  width,
  measureRef,
  eager,
  onOpen,
  onDownload,
  onDelete,
  onRename,
  readOnly = false,
}: LibraryItemCardProps): ReactElement {
  const badge = typeBadge(item);
  const aspect = aspectBadge(item);
  // a derived copy (or a small original): a large render shows the placeholder until its thumbnail is made
  const thumbnail = tilePicture(item);
  return (
    <li
      ref={measureRef}
      className="library-item"
      data-type={item.type}
      data-index={index}
      aria-posinset={index + 1}
      aria-setsize={setSize}
      // left/top, not a transform: tiles never move while scrolling, and whole pixels keep text sharp
      style={{ left, top, width }}
    >
      {/* the badges sit beside the button, not in it: its name ('Open render <name>') is all it says */}
      <div className="library-item-media">
        <button
          type="button"
          className="library-item-open"
          aria-label={`Open ${badge.toLowerCase()} ${item.data.name}`}
          onClick={() => onOpen(item)}
          style={{ aspectRatio: String(mediaAspect(item)) }}
        >
          {thumbnail ? (
            <img src={thumbnail} alt={item.data.name} loading={eager ? 'eager' : 'lazy'} decoding="async" />
          ) : isVideo(item) && item.signed_url ? (
            <video src={item.signed_url} preload="metadata" muted playsInline aria-label={item.data.name} />
          ) : (
            <span className="library-item-placeholder" aria-hidden="true" />
          )}
          {isVideo(item) && (
            <span className="library-play" aria-hidden="true">
              <Icon name="play" size={22} />
            </span>
          )}
        </button>
        <span className="library-badges">
          <span className={`badge badge-${item.type}`}>{badge}</span>
          {aspect && <span className="badge badge-aspect">{aspect}</span>}
          {isVideo(item) && typeof item.data.duration === 'number' && item.data.duration > 0 && (
            <span className="badge badge-duration" aria-label={`Duration ${countText(Math.round(item.data.duration), 'second')}`}>
              {durationText(item.data.duration)}
            </span>
          )}
        </span>
      </div>
      <div className="library-item-body">
        {readOnly ? (
          <p className="library-item-name">{item.data.name}</p>
        ) : (
          <InlineName value={item.data.name} label={`Rename ${item.data.name}`} onSave={(name) => onRename(item, name)} className="library-item-name" />
        )}
        {typeof item.data.original_prompt === 'string' && item.data.original_prompt.trim() && (
          <p className="library-item-prompt" title={item.data.original_prompt}>
            <span className="visually-hidden">Prompt: </span>“{item.data.original_prompt.trim()}”
          </p>
        )}
        <div className="library-item-actions">
          <button type="button" className="icon-button" aria-label={`Download ${item.data.name}`} title="Download" onClick={() => onDownload(item)}>
            <Icon name="download" size={18} />
          </button>
          {!readOnly && (
            <button type="button" className="icon-button icon-button-danger" aria-label={`Delete ${item.data.name}`} title="Delete" onClick={() => onDelete(item)}>
              <Icon name="trash" size={18} />
            </button>
          )}
        </div>
      </div>
    </li>
  );
});
