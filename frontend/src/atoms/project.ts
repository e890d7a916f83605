import { atom } from 'jotai';
import { fetchProjectContent, fetchProjects, type ContentItem } from '../api/projects';
import { sessionKeyAtom } from './session';
import { settledAtom } from './settled';
import { addressEpochAtom, viewAtom, viewResetsAtom } from './view';
import { DEFAULT_LOCATION, hrefForLocation } from './viewUrl';

/** The project open in the Content Library, kept in `?project=<id>` so reload and Back work. */
function projectFromSearch(search: string): string | null {
  const id = new URLSearchParams(search).get('project');
  return id && /^[0-9a-f-]{36}$/i.test(id) ? id : null;
}

function hrefWithProject(href: string, projectId: string | null): string {
  const url = new URL(href);
  if (projectId) url.searchParams.set('project', projectId);
  else url.searchParams.delete('project');
  return `${url.pathname}${url.search}${url.hash}`;
}

/**
 * The open project, the view reset it was opened after (a sign-out voids it: the next user never inherits it) and
 * the address epoch it was opened in: once the address has moved under the app (Back, Forward, a workspace switch)
 * the open project is the one the address names.
 */
const openProjectStoreAtom = atom<{ id: string | null; resets: number; epoch: number }>({ id: projectFromSearch(window.location.search), resets: 0, epoch: 0 });

const openProjectBaseAtom = atom((get) => {
  const { id, resets, epoch } = get(openProjectStoreAtom);
  const viewResets = get(viewResetsAtom);
  if (epoch !== get(addressEpochAtom)) return projectFromSearch(window.location.search);
  return resets === viewResets ? id : null;
});

/**
 * null: the projects list. Setting it pushes a history entry, so Back returns to the list; on the Projects view
 * the address names the detail `?view=overview&project=<id>` (000 section 2's view name).
 */
export const openProjectIdAtom = atom(
  (get) => get(openProjectBaseAtom),
  (get, set, projectId: string | null) => {
    if (get(openProjectBaseAtom) === projectId) return;
    set(openProjectStoreAtom, { id: projectId, resets: get(viewResetsAtom), epoch: get(addressEpochAtom) });
    const href = hrefWithProject(window.location.href, projectId);
    const onProjects = get(viewAtom) === 'projects';
    window.history.pushState(null, '', onProjects ? hrefForLocation(new URL(href, window.location.href).toString(), { ...DEFAULT_LOCATION, view: 'projects' }) : href);
  },
);

// ---------- projects list ----------

const projectsVersionAtom = atom<{ n: number; fresh: boolean }>({ n: 0, fresh: false });

export const projectsAtom = atom(async (get) => {
  const { fresh } = get(projectsVersionAtom);
  if (!get(sessionKeyAtom)) return [];
  return fetchProjects({ fresh });
});

export const projectsStateAtom = settledAtom(projectsAtom);

/** Re-reads the list: past the 5 s cache by default (after a change); `{ fresh: false }` when the list is shown again. */
export const refreshProjectsAtom = atom(null, (_get, set, options: { fresh: boolean } = { fresh: true }) =>
  set(projectsVersionAtom, (v) => ({ n: v.n + 1, fresh: options.fresh })),
);

// ---------- content library of the open project ----------

/** Bumped to re-read; `fresh` skips the 30 s client cache and the server's short cache. */
const contentVersionAtom = atom<{ n: number; fresh: boolean }>({ n: 0, fresh: false });

export interface ProjectContent {
  projectId: string | null;
  items: ContentItem[];
}

/** Carries its project id: while another project's listing loads, the previous answer is recognisably not this one's. */
export const projectContentAtom = atom(async (get): Promise<ProjectContent> => {
  const { fresh } = get(contentVersionAtom);
  const projectId = get(openProjectBaseAtom);
  if (!projectId || !get(sessionKeyAtom)) return { projectId, items: [] };
  return { projectId, items: await fetchProjectContent(projectId, { fresh }) };
});

export const projectContentStateAtom = settledAtom(projectContentAtom);

export const refreshProjectContentAtom = atom(null, (_get, set, options: { fresh: boolean } = { fresh: true }) =>
  set(contentVersionAtom, (v) => ({ n: v.n + 1, fresh: options.fresh })),
);
