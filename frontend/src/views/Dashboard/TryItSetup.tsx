import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { startTryItOnboarding } from '../../api/onboarding';
import { forgetProjectContent } from '../../api/projects';
import { refreshProjectsAtom } from '../../atoms/project';
import { currentUserAtom } from '../../atoms/session';
import { showToastAtom } from '../../atoms/toast';
import { openOnboardedProjectAtom } from '../../atoms/tryIt';
import { LoadingState } from '../../components/Spinner';
import { onboardTryIt } from '../../tryIt/onboardTryIt';
import { browserTryItStore, tryItImageFile } from '../../tryIt/tryItFile';
import { sendRenderUpload } from '../../upload/sendRender';
import { uploadInBatches } from '../../upload/uploadQueue';
import '../../tryIt/tryIt.css';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One try per user and page load: a failure is shown once, not on every render (the data stays for the next visit). */
const triedFor = new Set<string>();

/**
 * Signed in with try-it data saved in this browser: 'Setting up your project...' while the first project is made
 * and the image uploaded into it, then that project opens.
 */
export function TryItSetup(): ReactElement | null {
  const user = useAtomValue(currentUserAtom);
  const toast = useSetAtom(showToastAtom);
  const refreshProjects = useSetAtom(refreshProjectsAtom);
  const openProject = useSetAtom(openOnboardedProjectAtom);
  const [busy, setBusy] = useState(() => !!user && !triedFor.has(user.id) && browserTryItStore().pending() !== null);

  useEffect(() => {
    if (!user || triedFor.has(user.id)) return;
    const store = browserTryItStore();
    if (!store.pending()) return;
    triedFor.add(user.id);
    setBusy(true);
    void (async () => {
      const outcome = await onboardTryIt({
        store,
        startOnboarding: startTryItOnboarding,
        uploadImage: async (image, projectId) => {
          const summary = await uploadInBatches([tryItImageFile(image)], {
            prepare: async (file) => file,
            send: (file, onFraction) => sendRenderUpload({ file, projectId, userId: user.id }, onFraction),
            sleep,
          });
          const uploaded = summary.succeeded[0];
          if (!uploaded) throw new Error(summary.failed[0]?.message ?? 'Upload failed');
          return uploaded.result.render.data.id;
        },
      });
      setBusy(false);
      if (outcome.kind === 'failed') toast({ kind: 'error', message: outcome.error });
      if (outcome.kind !== 'created') return;
      if (outcome.uploadError) toast({ kind: 'error', message: outcome.uploadError });
      forgetProjectContent(outcome.projectId);
      refreshProjects();
      openProject(outcome.projectId);
    })();
  }, [user, toast, refreshProjects, openProject]);

  if (!busy) return null;
  return (
    <div className="tryit-setup">
      <div className="panel tryit-setup-panel">
        <LoadingState label="Setting up your project..." />
      </div>
    </div>
  );
}
