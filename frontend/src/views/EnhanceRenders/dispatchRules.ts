/**
 * Job dispatch rules of spec 001 (sections 5, 7 and 8): which images may run, how a network failure is retried
 * and what the toasts say. Pure, so jest checks them as the page uses them.
 */
import { DRAFT_LIMITS, ENHANCE_MSG, type DispatchResponse, type DispatchResultItem } from '../../../../domain/enhanceRenders';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Only images with a UUID id are saved on the server; a local placeholder is still uploading. */
export function isSavedImageId(id: string): boolean {
  return UUID.test(id);
}

/** Which selected images a run goes to, or the spec's message when none can go. */
export function runTargets(selectedIds: readonly string[]): { ok: true; ids: string[] } | { ok: false; message: string } {
  if (selectedIds.length === 0) return { ok: false, message: ENHANCE_MSG.selectImage };
  const saved = selectedIds.filter(isSavedImageId);
  if (saved.length === 0) return { ok: false, message: ENHANCE_MSG.waitForSaving };
  return { ok: true, ids: saved };
}

/**
 * Runs `attempt`, trying again after 700 ms and then 1400 ms when it fails for a network reason
 * (`isNetworkFailure`): 3 tries in all. Any other failure, or the third network failure, is thrown.
 */
export async function withDispatchRetry<T>(
  attempt: () => Promise<T>,
  options: { isNetworkFailure: (error: unknown) => boolean; sleep: (ms: number) => Promise<void> },
): Promise<T> {
  const waits: readonly number[] = DRAFT_LIMITS.dispatchRetryWaitsMs;
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const wait = waits[n];
      if (wait === undefined || !options.isNetworkFailure(error)) throw error;
      await options.sleep(wait);
    }
  }
}

/** A reply as the browser reads it: the spec's fields, any of which a failing server may leave out. */
export interface DispatchReply {
  success: boolean;
  dispatched?: number;
  results?: Array<Partial<DispatchResultItem> & { ok: boolean }>;
  error?: string | null;
}

export type { DispatchResponse };

function detailText(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() ? value : null;
  return null;
}

/** 'Failed to start jobs: {detail}' with the detail cut to 160 characters. */
export function failedToStartText(detail: string): string {
  return ENHANCE_MSG.failedToStartJobs + ': ' + detail.slice(0, DRAFT_LIMITS.dispatchErrorMaxLength);
}

/**
 * The toasts for a dispatch reply: 'Started 1 job' or 'Started N jobs' for what started, and 'Failed to start jobs: {detail}' when
 * anything failed, detail being the first failed result's details or error, else the overall error, else
 * 'Failed', cut to 160 characters.
 */
export function dispatchToasts(reply: DispatchReply): Array<{ kind: 'success' | 'error'; message: string }> {
  const results = reply.results ?? [];
  const dispatched = reply.dispatched ?? results.filter((r) => r.ok).length;
  const firstFailed = results.find((r) => !r.ok);
  const toasts: Array<{ kind: 'success' | 'error'; message: string }> = [];
  if (dispatched > 0) toasts.push({ kind: 'success', message: ENHANCE_MSG.startedJobs(dispatched) });
  if (!reply.success || firstFailed || dispatched === 0) {
    const detail = detailText(firstFailed?.data?.details) ?? detailText(firstFailed?.error) ?? detailText(reply.error) ?? 'Failed';
    toasts.push({ kind: 'error', message: failedToStartText(detail) });
  }
  return toasts;
}

/** The ids of the images whose job started, so their cards show 'Processing…' at once. */
export function startedImageIds(reply: DispatchReply, requested: readonly string[]): string[] {
  const results = reply.results ?? [];
  return results.flatMap((r, i) => (r.ok ? [r.imageId ?? requested[i]] : [])).filter((id): id is string => typeof id === 'string');
}
