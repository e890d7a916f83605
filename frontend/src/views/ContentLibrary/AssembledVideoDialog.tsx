import type { ReactElement } from 'react';
import type { ContentItem } from '../../api/projects';
import { Dialog } from '../../components/Dialog';
import { Icon } from '../../components/Icon';
import { aspectBadge } from './libraryItems';

/** A compiled video opens here (001 section 2): play it, Download Video, Delete Video. */
export function AssembledVideoDialog({ item, onClose, onDownload, onDelete }: { item: ContentItem; onClose: () => void; onDownload: () => void; onDelete?: () => void }): ReactElement {
  const platform = item.data.editing_data?.platform;
  const aspect = aspectBadge(item);
  return (
    <Dialog title="Assembled video" onClose={onClose} className="dialog-wide">
      {item.signed_url && <video className="library-preview-media" src={item.signed_url} controls playsInline preload="metadata" />}
      <p className="muted">
        {item.data.name}
        {platform ? ` · ${platform}` : ''}
        {aspect ? ` · ${aspect}` : ''}
      </p>
      <div className="form-actions">
        {onDelete && (
          <button type="button" className="button button-danger" onClick={onDelete}>
            <Icon name="trash" size={18} /> Delete Video
          </button>
        )}
        <button type="button" className="button button-primary" onClick={onDownload}>
          <Icon name="download" size={18} /> Download Video
        </button>
      </div>
    </Dialog>
  );
}
