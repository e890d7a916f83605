import type { ReactElement } from 'react';
import type { ContentItem } from '../../api/projects';
import { Icon } from '../../components/Icon';
import { InlineName } from '../Projects/InlineName';
import { aspectBadge, durationText, isVideo, typeBadge } from './libraryItems';

interface LibraryItemCardProps {
  item: ContentItem;
  eager: boolean;
  onOpen: () => void;
  onDownload: () => void;
  onDelete: () => void;
  onRename: (name: string) => Promise<void>;
}

/** One masonry tile: thumbnail with type and aspect badges, inline-editable name, download and delete. */
export function LibraryItemCard({ item, eager, onOpen, onDownload, onDelete, onRename }: LibraryItemCardProps): ReactElement {
  const badge = typeBadge(item);
  const aspect = aspectBadge(item);
  const thumbnail = item.data.thumbnail_url ?? (isVideo(item) ? null : item.signed_url);
  return (
    <li className="library-item" data-type={item.type}>
      <button type="button" className="library-item-media" aria-label={`Open ${badge.toLowerCase()} ${item.data.name}`} onClick={onOpen}>
        {thumbnail ? (
          <img src={thumbnail} alt={item.data.name} loading={eager ? 'eager' : 'lazy'} decoding="async" />
        ) : isVideo(item) && item.signed_url ? (
          <video src={item.signed_url} preload="metadata" muted playsInline aria-label={item.data.name} />
        ) : (
          <span className="library-item-placeholder">{badge}</span>
        )}
        {isVideo(item) && (
          <span className="library-play" aria-hidden="true">
            <Icon name="play" size={22} />
          </span>
        )}
        <span className="library-badges">
          <span className={`badge badge-${item.type}`}>{badge}</span>
          {aspect && <span className="badge badge-aspect">{aspect}</span>}
          {isVideo(item) && typeof item.data.duration === 'number' && item.data.duration > 0 && (
            <span className="badge badge-duration" aria-label={`Duration ${Math.round(item.data.duration)} seconds`}>
              {durationText(item.data.duration)}
            </span>
          )}
        </span>
      </button>
      <div className="library-item-body">
        <InlineName value={item.data.name} label={`Rename ${item.data.name}`} onSave={onRename} className="library-item-name" />
        <div className="library-item-actions">
          <button type="button" className="icon-button" aria-label={`Download ${item.data.name}`} title="Download" onClick={onDownload}>
            <Icon name="download" size={18} />
          </button>
          <button type="button" className="icon-button icon-button-danger" aria-label={`Delete ${item.data.name}`} title="Delete" onClick={onDelete}>
            <Icon name="trash" size={18} />
          </button>
        </div>
      </div>
    </li>
  );
}
