import { atom } from 'jotai';
import { openProjectIdAtom } from './project';
import { navigateAtom } from './view';
import { clipSourceFromSearch, projectFromSearch, type ClipSourceRef } from './clipUrl';

export type { ClipSourceRef } from './clipUrl';

interface ClipLocation {
  projectId: string | null;
  source: ClipSourceRef | null;
}

function readLocation(): ClipLocation {
  return { projectId: projectFromSearch(window.location.search), source: clipSourceFromSearch(window.location.search) };
}

const clipLocationBaseAtom = atom<ClipLocation>(readLocation());
clipLocationBaseAtom.onMount = (set) => {
  const onPopState = () => set(readLocation());
  window.addEventListener('popstate', onPopState);
  return () => window.removeEventListener('popstate', onPopState);
};

export const clipLocationAtom = atom((get) => get(clipLocationBaseAtom));

/** Opens Generate Clip for a render or an AI image of a project (the library's "Generate Clip"). */
export const openClipGenerationAtom = atom(null, (_get, set, to: { projectId: string; source: ClipSourceRef }) => {
  set(clipLocationBaseAtom, { projectId: to.projectId, source: to.source });
  set(navigateAtom, {
    view: 'clip-generation',
    params: { project: to.projectId, render: to.source.kind === 'render' ? to.source.id : null, image: to.source.kind === 'image' ? to.source.id : null },
  });
});

/** Back to the project's content library. */
export const backToProjectAtom = atom(null, (_get, set, projectId: string | null) => {
  set(navigateAtom, { view: 'projects', params: { project: projectId, render: null, image: null } });
  set(openProjectIdAtom, projectId);
});

/** Open Approvals from the clip screen (the overlay and the notices). */
export const openApprovalsAtom = atom(null, (_get, set) => {
  set(navigateAtom, { view: 'approvals', params: { render: null, image: null } });
});

/** Add credits: the account's billing tab. */
export const openBillingAtom = atom(null, (_get, set) => {
  set(navigateAtom, { view: 'account', accountTab: 'billing', params: { render: null, image: null } });
});
