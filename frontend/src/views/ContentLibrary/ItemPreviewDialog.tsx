import { useState, type ReactElement } from 'react';
import { CompareDialog } from '../Compare/CompareDialog';
import type { ContentItem } from '../../api/projects';
import { Dialog } from '../../components/Dialog';
import { Icon } from '../../components/Icon';
import type { LineageNode } from '../../api/lineage';
import { LineageStrip } from './LineageStrip';
import { ItemReview } from '../Comments/ItemReview';
import { aspectBadge, dialogPicture, isVideo, typeBadge } from './libraryItems';

function sizeText(bytes: unknown): string | null {
  return typeof bytes === 'number' && bytes > 0 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : null;
}

/** The item's Action Center: a large preview (a render's 2048 px copy, not its original) with its facts and actions. */
export function ItemPreviewDialog({
  item,
  onClose,
  onDownload,
  onDelete,
  onGenerateClip,
  onEditImage,
  onOpenLineage,
}: {
  item: ContentItem;
  onClose: () => void;
  onDownload: () => void;
  /** absent for a role that may not delete (a viewer) */
  onDelete?: () => void;
  /** Renders and AI images can become clips (the Generate Clip screen). */
  onGenerateClip?: () => void;
  /** Renders and AI images can be edited with AI (the Enhanced AI Editor). */
  onEditImage?: () => void;
  /** A step of the item's version chain was chosen. */
  onOpenLineage?: (node: LineageNode) => void;
}): ReactElement {
  const facts = [
    typeBadge(item),
    aspectBadge(item),
    typeof item.data.width === 'number' && typeof item.data.height === 'number' ? `${item.data.width} × ${item.data.height}` : null,
    sizeText(item.data.file_size),
  ].filter(Boolean);
  // a derived copy, never a large original: Download gets the original's bytes
  const picture = isVideo(item) ? null : dialogPicture(item);
  const [comparing, setComparing] = useState(false);
  return (
    <Dialog title={item.data.name} onClose={onClose} className="dialog-wide dialog-review dialog-action-center">
      {/* the picture with its comment threads (pins on it, the threads beside it) */}
      <ItemReview
        itemId={item.data.id}
        media={isVideo(item) ? { type: 'video', src: item.signed_url ?? null, alt: item.data.name } : { type: 'image', src: picture, alt: item.data.name }}
        fallback={
          <p className="muted review-fallback" role="status">
            The preview is being made. Download gets the original.
          </p>
        }
      />
      <p className="muted">{facts.join(' · ')}</p>
      <LineageStrip itemId={item.data.id} onOpen={onOpenLineage} />
      <div className="form-actions item-actions">
        {/* a render is where chains start: there is nothing before it to compare with */}
        {item.type !== 'render' && (
          <button type="button" className="button button-ghost" onClick={() => setComparing(true)}>
            <Icon name="layers" size={18} /> Compare
          </button>
        )}
        {onDelete && (
          <button type="button" className="button button-danger" onClick={onDelete}>
            <Icon name="trash" size={18} /> Delete
          </button>
        )}
        <button type="button" className="button button-primary" onClick={onDownload}>
          <Icon name="download" size={18} /> Download
        </button>
        {onGenerateClip && (
          <button type="button" className="button button-primary" onClick={onGenerateClip}>
            <Icon name="film" size={18} /> Generate Clip
          </button>
        )}
        {onEditImage && (
          <button type="button" className="button button-primary" onClick={onEditImage}>
            <Icon name="sparkles" size={18} /> Edit with AI
          </button>
        )}
      </div>
      {comparing && <CompareDialog itemId={item.data.id} title={item.data.name} onClose={() => setComparing(false)} />}
    </Dialog>
  );
}
