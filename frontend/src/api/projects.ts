import { CONTENT_CACHE_MS } from '../../../domain/constants';
import type { ProjectView } from '../../../domain/projects';
import { api, currentWorkspaceId } from './client';

/** A project card (GET /api/projects/list), as the server answers it. */
export type Project = ProjectView;

export type ContentItemType = 'render' | 'clip' | 'compiled_video' | 'ai_image' | 'generated_image';
export type ContentSource = 'renders' | 'images' | 'clips' | 'compiled_videos' | 'generated_content';

export interface ContentData {
  id: string;
  project_id: string;
  name: string;
  file_url: string;
  file_name: string;
  created_at: string;
  thumbnail_url: string | null;
  /** A render's preview (at most 2048 px each way): what the item dialog shows; null until it is made. */
  preview_url?: string | null;
  aspect_ratio: string | null;
  width?: number | null;
  height?: number | null;
  file_size?: number | null;
  duration?: number | null;
  editing_data?: { status?: string; platform?: string; aspect_ratio?: string; aspectRatio?: string };
  [key: string]: unknown;
}

/** One library item (GET /api/projects/{id}/content). */
export interface ContentItem {
  type: ContentItemType;
  source: ContentSource;
  data: ContentData;
  signed_url: string | null;
}

export interface RenderUploadAnswer {
  success: boolean;
  duplicate: boolean;
  url: string;
  render: ContentItem;
  processingInfo: { width: number; height: number; aspectRatio: string; fileSize: number; mimeType: string; thumbnailUrl: string | null };
}

/** The projects list is reused for 5 s (001 section 9: caches, projects list 5 s) unless a caller forces a read. */
export const PROJECTS_CACHE_MS = 5000;

/** The read in flight counts too: two asks a moment apart share one request. A failed read is not kept. */
let projectsCache: { at: number; workspace: string | null; read: Promise<Project[]> } | null = null;

export async function fetchProjects(options: { fresh?: boolean } = {}): Promise<Project[]> {
  // the list is the current workspace's: another workspace's (before a switch, or Back) never answers for it
  if (!options.fresh && projectsCache && projectsCache.workspace === currentWorkspaceId() && Date.now() - projectsCache.at < PROJECTS_CACHE_MS) return projectsCache.read;
  const read = api
    .get('projects/list')
    .json<{ success: true; projects: Project[] }>()
    .then((body) => body.projects);
  const entry = { at: Date.now(), workspace: currentWorkspaceId(), read };
  projectsCache = entry;
  read.catch(() => {
    if (projectsCache === entry) projectsCache = null;
  });
  return read;
}

/** After a change to any project, or another session's: nothing cached may answer for the list. */
export function forgetProjects(): void {
  projectsCache = null;
}

export async function fetchProject(projectId: string): Promise<Project> {
  const body = await api.get(`projects/${projectId}`).json<{ success: true; project: Project }>();
  return body.project;
}

export async function createProject(input: { name: string; address?: string }): Promise<Project> {
  forgetProjects();
  const body = await api.post('projects', { json: input }).json<{ success: true; project: Project }>();
  return body.project;
}

export async function updateProject(projectId: string, changes: { name?: string; address?: string | null }): Promise<Project> {
  forgetProjects();
  const body = await api.patch(`projects/${projectId}`, { json: changes }).json<{ success: true; project: Project }>();
  return body.project;
}

export async function deleteProject(projectId: string): Promise<void> {
  forgetProjects();
  await api.delete(`projects/${projectId}`);
  forgetProjectContent(projectId);
}

export async function deleteProjects(ids: readonly string[]): Promise<number> {
  forgetProjects();
  const body = await api.post('projects/bulk-delete', { json: { ids } }).json<{ success: true; deleted: number }>();
  ids.forEach(forgetProjectContent);
  return body.deleted;
}

/** Listings kept for 30 s (000 section 7), per project. */
const contentCache = new Map<string, { at: number; items: ContentItem[] }>();

export function forgetProjectContent(projectId: string): void {
  contentCache.delete(projectId);
}

/**
 * A project's library. Answers from the 30 s cache unless `fresh`; a fresh read asks the server to skip its own
 * short cache too (`?refresh=1&bust=<time>`).
 */
export async function fetchProjectContent(projectId: string, options: { fresh?: boolean } = {}): Promise<ContentItem[]> {
  const cached = contentCache.get(projectId);
  if (!options.fresh && cached && Date.now() - cached.at < CONTENT_CACHE_MS) return cached.items;
  const searchParams = options.fresh ? { refresh: '1', bust: String(Date.now()) } : undefined;
  const body = await api.get(`projects/${projectId}/content`, { searchParams }).json<{ success: true; content: ContentItem[] }>();
  contentCache.set(projectId, { at: Date.now(), items: body.content });
  return body.content;
}

export async function deleteContentItem(projectId: string, item: ContentItem): Promise<void> {
  if (item.type === 'compiled_video') await api.delete(`projects/${projectId}/compiled-videos/${item.data.id}`);
  else await api.delete(`projects/${projectId}/content/${item.source}/${item.data.id}`);
  forgetProjectContent(projectId);
}

export async function renameContentItem(projectId: string, item: ContentItem, name: string): Promise<ContentItem> {
  const body = await api.patch(`projects/${projectId}/content/${item.source}/${item.data.id}`, { json: { name } }).json<{ success: true; item: ContentItem }>();
  forgetProjectContent(projectId);
  return body.item;
}

/**
 * Fired on window when a project's content changed elsewhere (an approval saved into it): the library re-reads.
 * `detail.projectId` narrows it to one project; without it every open library refreshes.
 */
export const CONTENT_REFRESH_EVENT = 'content-refresh';

export function announceContentRefresh(projectId?: string): void {
  if (projectId) forgetProjectContent(projectId);
  else contentCache.clear();
  window.dispatchEvent(new CustomEvent(CONTENT_REFRESH_EVENT, { detail: { projectId } }));
}
