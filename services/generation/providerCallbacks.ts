/**
 * A hosted provider's callback when a job ends (fal's webhook, DESIGN.md "Tracing": callbacks instead of polling).
 * The route hands over the exact body and headers; this verifies fal's signature, then claims the callback once on the
 * job's row (the first verified callback for the job's own provider request, while the job is still running) and
 * signals the job's waiting workflow in the same transaction, so a signal that could not be sent leaves the claim undone
 * and fal's retry tries again. Anything else changes nothing: a forged or stale signature is refused (401); a callback
 * for an unknown job, another request, a finished job or one already claimed (a replay) is answered 200 and ignored, so
 * fal stops retrying it.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import { CLIP_JOB_ACTIVE_STATUSES } from '../../domain/clipGeneration';
import { DomainError } from '../../domain/errors';
import { clipProviderCallbackSignal } from '../../domain/workflowContracts/clipGeneration';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { imageEditProviderCallbackSignal } from '../../domain/workflowContracts/imageEdit';
import { decodeFalJobId } from '../../providers/fal/providers';
import { verifyFalWebhook, type FalWebhookKeySource } from '../../providers/fal/webhookSignature';

export const PROVIDER_CALLBACK_CODES = {
  unverified: 'PROVIDER_CALLBACK_UNVERIFIED',
  keysUnavailable: 'PROVIDER_CALLBACK_KEYS_UNAVAILABLE',
  notReady: 'PROVIDER_CALLBACK_NOT_READY',
} as const;

export type ProviderCallbackOutcome = 'applied' | 'unknown_job' | 'other_request' | 'already_received' | 'job_ended';

export const PROVIDER_CALLBACK_OUTCOMES: readonly ProviderCallbackOutcome[] = ['applied', 'unknown_job', 'other_request', 'already_received', 'job_ended'];

/** The job a callback URL names: `?clip=<jobId>` (a clip) or `?image=<jobId>` (an image edit). */
export interface ProviderCallbackTarget {
  kind: 'clip' | 'image';
  jobId: string;
}

/** An image edit's row is active while pending or processing (it closes completed, failed or cancelled). */
const IMAGE_EDIT_ACTIVE_STATUSES = ['pending', 'processing'];

export interface ProviderCallbackDeps {
  knex: Knex;
  keys: FalWebhookKeySource;
  temporal: () => Promise<Client>;
  logger: Logger;
  now?: () => number;
}

export interface FalCallbackRequest {
  target: ProviderCallbackTarget;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The provider request id a stored provider job id names (fal's `fal:<submittedAt>:<requestId>:<model>`), or null. */
function requestIdOf(providerJobId: string): string | null {
  try {
    return decodeFalJobId(providerJobId).requestId;
  } catch {
    return null;
  }
}

interface CallbackRow {
  provider_job_id: string | null;
  status: string;
  provider_called_back_at: Date | null;
  workflow_id: string;
}

/** Where each kind of job keeps its claim (its row, locked for the claim), when it is still running, and what to signal. */
const TARGETS = {
  clip: {
    row: (trx: Knex, jobId: string) => trx('video_generation_jobs').where({ id: jobId }),
    active: (status: string) => CLIP_JOB_ACTIVE_STATUSES.includes(status as (typeof CLIP_JOB_ACTIVE_STATUSES)[number]),
    signal: clipProviderCallbackSignal,
  },
  image: {
    row: (trx: Knex, jobId: string) => trx('ai_image_edits').where({ workflow_id: imageEditWorkflowId(jobId) }),
    active: (status: string) => IMAGE_EDIT_ACTIVE_STATUSES.includes(status),
    signal: imageEditProviderCallbackSignal,
  },
} as const;

export async function handleFalCallback(deps: ProviderCallbackDeps, request: FalCallbackRequest): Promise<{ outcome: ProviderCallbackOutcome }> {
  const verdict = await verifyFalWebhook(request.headers, request.body, deps.keys, (deps.now ?? Date.now)());
  if (!verdict.ok) {
    if (verdict.reason === 'keys_unavailable') throw new DomainError(503, PROVIDER_CALLBACK_CODES.keysUnavailable, "fal's webhook keys could not be read");
    deps.logger.warn({ reason: verdict.reason, target: request.target }, 'refused a provider callback');
    throw new DomainError(401, PROVIDER_CALLBACK_CODES.unverified, 'The callback signature could not be verified');
  }
  const { requestId } = verdict;
  const { jobId, kind } = request.target;
  const target = TARGETS[kind];
  return deps.knex.transaction(async (trx) => {
    const row = (await target
      .row(trx, jobId)
      .forUpdate()
      .first('provider_job_id', 'status', 'provider_called_back_at', 'workflow_id')) as CallbackRow | undefined;
    if (!row) return { outcome: 'unknown_job' as const };
    // claimed already: this callback again (a replay, fal's retry), or a fallback look that found the job done first
    if (row.provider_called_back_at) {
      // an image edit runs two jobs one after the other (the edit, the upscale): another request's callback while the
      // first is claimed may be the next job's, quicker than the submit's write: a 409 makes fal try again
      const another = row.provider_job_id !== null && requestIdOf(row.provider_job_id) !== requestId;
      if (kind === 'image' && another && target.active(row.status)) throw new DomainError(409, PROVIDER_CALLBACK_CODES.notReady, 'The job has not recorded its provider request yet');
      return { outcome: 'already_received' as const };
    }
    if (!target.active(row.status)) return { outcome: 'job_ended' as const };
    // the submit has not stored the request id yet (fal can be quicker than our write): a 409 makes fal try again
    if (!row.provider_job_id) throw new DomainError(409, PROVIDER_CALLBACK_CODES.notReady, 'The job has not recorded its provider request yet');
    if (requestIdOf(row.provider_job_id) !== requestId) return { outcome: 'other_request' as const };
    await target.row(trx, jobId).update({ provider_called_back_at: trx.fn.now() });
    try {
      const client = await deps.temporal();
      await client.workflow.getHandle(row.workflow_id).signal(target.signal, { requestId });
    } catch (err) {
      // the run is gone (ended meanwhile): nothing waits for the callback
      if (err instanceof WorkflowNotFoundError) return { outcome: 'job_ended' as const };
      throw err;
    }
    return { outcome: 'applied' as const };
  });
}
