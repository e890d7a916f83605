/** How the workspace sees a draft's images: the server's rows, local uploads in flight, and job states. Pure. */
import type { DraftImage } from '../../api/enhanceSet';
import type { Scope } from './draftState';
import { ENHANCE_MSG } from '../../../../domain/enhanceRenders';

export interface WorkspaceImage {
  id: string;
  name: string;
  /** a link to show (and download) the current version */
  displayUrl: string;
  /** the current version's stable address */
  currentUrl: string;
  /** the previous version (what Redo restores), or null when there is none */
  previousUrl: string | null;
  /** newest first, the current version included */
  history: ReadonlyArray<{ url: string; displayUrl: string }>;
  /** still uploading: not saved, so never a target */
  uploading: boolean;
  /** the current version's longest side in pixels, when the server has told it */
  longestSide?: number;
  /** its latest job failed and the user has not dismissed it: the card shows why, with Retry */
  failure?: { jobId: string; reason: string } | null;
}

export function toWorkspaceImage(image: DraftImage): WorkspaceImage {
  const history = (Array.isArray(image.metadata?.history) ? image.metadata.history : [])
    .filter((e) => e && typeof e.url === 'string' && e.url)
    .map((e) => ({ url: e.url, displayUrl: e.signed_url || e.url }));
  const previous = image.metadata?.previous_url;
  return {
    id: image.id,
    name: image.name,
    displayUrl: image.resolved_url || history[0]?.displayUrl || image.source_url,
    currentUrl: history[0]?.url ?? image.source_url,
    previousUrl: typeof previous === 'string' && previous ? previous : null,
    history,
    uploading: false,
    failure: failureOf(image),
    ...(typeof image.metadata?.width === 'number' && typeof image.metadata?.height === 'number' ? { longestSide: Math.max(image.metadata.width, image.metadata.height) } : {}),
  };
}

/** The failure the card keeps showing: the latest job failed, and its notice was not dismissed. */
export function failureOf(image: DraftImage): { jobId: string; reason: string } | null {
  const last = image.last_job;
  if (image.job || !last || last.status !== 'failed' || last.dismissed) return null;
  return { jobId: last.id, reason: last.error || ENHANCE_MSG.jobFailed };
}

/** The images a run goes to for a scope: all, the selected ones, or the first selected one (in grid order). */
export function scopedSelection(scope: Scope, images: readonly WorkspaceImage[], selected: ReadonlySet<string>, pinnedId: string | null): string[] {
  const eligible = images.filter((image) => image.id !== pinnedId);
  if (scope === 'all') return eligible.map((image) => image.id);
  const chosen = eligible.filter((image) => selected.has(image.id)).map((image) => image.id);
  return scope === 'first selected' ? chosen.slice(0, 1) : chosen;
}

/** The images whose job has not ended, as the server reports them. */
export function runningJobIds(images: readonly DraftImage[]): Set<string> {
  return new Set(images.filter((image) => image.job && (image.job.status === 'pending' || image.job.status === 'processing')).map((image) => image.id));
}

/**
 * The images whose job ended in failure between two reads (they were running, now are not, and their latest job
 * failed), with the server's reason.
 */
export function failedSince(before: ReadonlySet<string>, images: readonly DraftImage[]): Array<{ id: string; name: string; error: string | null }> {
  return images
    .filter((image) => before.has(image.id) && !image.job && image.last_job?.status === 'failed')
    .map((image) => ({ id: image.id, name: image.name, error: image.last_job?.error ?? null }));
}
