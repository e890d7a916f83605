import { useSetAtom } from 'jotai';
import { useMemo, useState, type ReactElement } from 'react';
import { CREDIT_COST, PLATFORM_ASPECT } from '../../../../domain/constants';
import { openTryItClipAtom } from '../../atoms/tryIt';
import { Dialog } from '../../components/Dialog';
import { Icon } from '../../components/Icon';
import { browserTryItStore } from '../../tryIt/tryItFile';
import { formatFileSize, formatLabel } from '../../tryIt/tryItText';

/**
 * Try-it welcome dialog (000 section 2) in the project onboarding made: the saved image's name and size, the chosen
 * format and effect, a button to make that video (it opens Generate Clip preset for the uploaded render), and
 * 'Skip for now'. Shown while the choices are live (24 hours), until answered.
 */
export function TryItWelcomeDialog({ projectId, projectName }: { projectId: string; projectName: string | null }): ReactElement | null {
  const store = useMemo(browserTryItStore, []);
  const [data, setData] = useState(() => store.welcomeFor(projectId));
  const openClip = useSetAtom(openTryItClipAtom);
  if (!data) return null;

  const { welcome, selection } = data;
  const platform = selection?.selectedPlatform ?? null;
  const effect = selection?.selectedEffect ?? null;
  const videoLabel = [platform ? PLATFORM_ASPECT[platform] : null, effect, 'video'].filter(Boolean).join(' ');

  function skip(): void {
    store.finishWelcome();
    setData(null);
  }

  function createVideo(): void {
    if (!welcome.renderId) return;
    store.finishWelcome();
    setData(null);
    openClip({ projectId, renderId: welcome.renderId, effect, platform });
  }

  return (
    <Dialog title={`Welcome to ${projectName ?? welcome.projectName}!`} onClose={skip} className="tryit-welcome">
      <p>Your first project is ready{welcome.renderId ? ', with the image you picked as its first render' : ''}.</p>
      <dl className="facts tryit-welcome-facts" aria-label="Your try-it choices">
        <div>
          <dt>Image</dt>
          <dd>
            <span className="tryit-file-name">{welcome.fileName}</span> <span className="muted">· {formatFileSize(welcome.fileSize)}</span>
          </dd>
        </div>
        <div>
          <dt>Format</dt>
          <dd>{platform ? formatLabel(platform) : 'Not chosen'}</dd>
        </div>
        <div>
          <dt>Effect</dt>
          <dd>{effect ?? 'Not chosen'}</dd>
        </div>
      </dl>
      <p className="muted">
        {welcome.renderId
          ? `Creating this video will use ${CREDIT_COST.clip} creation credits, charged when you approve the clip.`
          : 'Upload the image to this project to create a video from it. A video uses creation credits.'}
      </p>
      <div className="form-actions">
        <button type="button" className="button button-ghost" onClick={skip}>
          Skip for now
        </button>
        <button type="button" className="button button-primary" disabled={!welcome.renderId} onClick={createVideo}>
          <Icon name="film" size={18} /> Create {videoLabel}
        </button>
      </div>
    </Dialog>
  );
}
