import { atom } from 'jotai';
import { navigateAtom } from './view';

/** Opens Video Assembly (the sidebar, or a project's "Assemble Video" with that project chosen to save into). */
export const openVideoAssemblyAtom = atom(null, (_get, set, projectId: string | null) => {
  set(navigateAtom, { view: 'video-assembly', params: { project: projectId, render: null, image: null } });
});

/** Approvals, where the assembled video waits (after 'completed', and from the pending-cap overlay). */
export const openApprovalsFromAssemblyAtom = atom(null, (_get, set) => {
  set(navigateAtom, { view: 'approvals', params: { mode: null } });
});
