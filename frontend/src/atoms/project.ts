import { atom } from 'jotai';
import { fetchProjectContent, fetchProjects, type ContentItem } from '../api/projects';
import { sessionKeyAtom } from './session';
import { settledAtom } from './settled';

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

const openProjectBaseAtom = atom<string | null>(projectFromSearch(window.location.search));
openProjectBaseAtom.onMount = (set) => {
  const onPopState = () => set(projectFromSearch(window.location.search));
  window.addEventListener('popstate', onPopState);
  return () => window.removeEventListener('popstate', onPopState);
};

/** null: the projects list. Setting it pushes a history entry, so Back returns to the list. */
export const openProjectIdAtom = atom(
  (get) => get(openProjectBaseAtom),
  (get, set, projectId: string | null) => {
    if (get(openProjectBaseAtom) === projectId) return;
    set(openProjectBaseAtom, projectId);
    window.history.pushState(null, '', hrefWithProject(window.location.href, projectId));
  },
);

// ---------- projects list ----------

const projectsVersionAtom = atom(0);

export const projectsAtom = atom(async (get) => {
  get(projectsVersionAtom);
  if (!get(sessionKeyAtom)) return [];
  return fetchProjects();
});

export const projectsStateAtom = settledAtom(projectsAtom);

export const refreshProjectsAtom = atom(null, (_get, set) => set(projectsVersionAtom, (v) => v + 1));

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
