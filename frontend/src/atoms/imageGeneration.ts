import { atom } from 'jotai';
import { openProjectIdAtom } from './project';
import { navigateAtom } from './view';

/** What the Enhanced AI Editor edits: `?render=<id>` or `?image=<id>`, with the project in `?project=`. */
export interface ImageSourceRef {
  kind: 'render' | 'image';
  id: string;
}

export interface ImageEditorLocation {
  projectId: string | null;
  source: ImageSourceRef | null;
}

const ID = /^[0-9a-f-]{36}$/i;

export function imageEditorLocationFromSearch(search: string): ImageEditorLocation {
  const params = new URLSearchParams(search);
  const project = params.get('project');
  const render = params.get('render');
  const image = params.get('image');
  let source: ImageSourceRef | null = null;
  if (render && !image && ID.test(render)) source = { kind: 'render', id: render };
  else if (image && !render && ID.test(image)) source = { kind: 'image', id: image };
  return { projectId: project && ID.test(project) ? project : null, source };
}

const locationBaseAtom = atom<ImageEditorLocation>(imageEditorLocationFromSearch(window.location.search));
locationBaseAtom.onMount = (set) => {
  const onPopState = () => set(imageEditorLocationFromSearch(window.location.search));
  window.addEventListener('popstate', onPopState);
  return () => window.removeEventListener('popstate', onPopState);
};

export const imageEditorLocationAtom = atom((get) => get(locationBaseAtom));

/** Opens the Enhanced AI Editor (view `image-generation`) for a render or AI image of a project. */
export const openImageEditorAtom = atom(null, (_get, set, to: { projectId: string; source: ImageSourceRef }) => {
  set(locationBaseAtom, { projectId: to.projectId, source: to.source });
  set(navigateAtom, {
    view: 'image-generation',
    params: { project: to.projectId, render: to.source.kind === 'render' ? to.source.id : null, image: to.source.kind === 'image' ? to.source.id : null },
  });
});

/** From the editor back to the project's content library, or on to Approvals. */
export const leaveImageEditorAtom = atom(null, (_get, set, to: { view: 'projects' | 'approvals'; projectId: string | null }) => {
  // the project stays in the address either way: Projects then opens its library again
  set(navigateAtom, { view: to.view, params: { project: to.projectId, render: null, image: null } });
  if (to.view === 'projects') set(openProjectIdAtom, to.projectId);
});
