import { useState, type ReactElement } from 'react';
import type { AssemblyClip } from '../../api/videoAssembly';
import { Dialog } from '../../components/Dialog';
import { ASSEMBLY_MSG } from '../../../../domain/assembly';
import { durationText } from '../ContentLibrary/libraryItems';
import { clipName } from './clipText';


/** The clip preview dialog: plays the clip, with its project, length and orientation. */
export function ClipPreviewDialog({ clip, orientation, onClose }: { clip: AssemblyClip; orientation: string; onClose: () => void }): ReactElement {
  const [failed, setFailed] = useState(!clip.file_url);
  const facts = [clip.project_name, clip.duration !== null ? durationText(clip.duration) : null, clip.aspect_ratio, orientation, clip.camera_movement].filter(Boolean);
  return (
    <Dialog title={clipName(clip)} onClose={onClose} className="dialog-wide">
      {failed ? (
        <div className="form-error" role="alert">
          {ASSEMBLY_MSG.failedToLoadPreview}
        </div>
      ) : (
        <video
          className="assembly-preview-video"
          src={clip.file_url}
          poster={clip.thumbnail_url ?? undefined}
          controls
          playsInline
          autoPlay
          muted
          preload="metadata"
          onError={() => setFailed(true)}
        />
      )}
      <p className="muted">{facts.join(' · ')}</p>
    </Dialog>
  );
}
