/**
 * What one account's uploads may hold before they are finished or used (docs/configuration.md, "Upload limits"):
 * unfinished resumable (tus) uploads by count and declared bytes, and Enhance Renders draft uploads not yet registered
 * (per draft: its 4 images and its waiting references; per account: all of them). The state is in PostgreSQL, so
 * the limits hold across API processes; each check runs in the transaction that records the new upload, under a
 * transaction-scoped advisory lock on the account, so two concurrent creations cannot both take the last slot.
 * Every refusal is counted in `upload_limit_refusals_total{limit}`.
 *
 * The account is the workspace (DESIGN.md "Teams (workspaces)"): `workspace_id` on resumable_uploads and draft_uploads
 * names the workspace the upload belongs to, and the limits count per workspace, so a team's members share one
 * budget, as they share its credits. Per uploading member would need the uploader recorded on those rows (a column
 * and a migration: the rows do not say which member started them), for little gain: the limits exist to bound what
 * one account can hold open in storage, and a workspace's storage is one account's. The lock is keyed the same way.
 */
import type { Knex } from 'knex';
import { ENHANCE_MODEL_OPTIONS, ENHANCE_MSG } from '../../domain/enhanceRenders';
import { DomainError } from '../../domain/errors';
import { uploadLimitRefusalsTotal, type UploadLimit } from '../platform/metrics';

/** First key of pg_advisory_xact_lock(int, int) per kind of upload; the second is a hash of the account (workspace) id. */
const LOCK_SPACES = { resumableUploads: 310_301, draftUploads: 310_302 } as const;

/** Holds the account's upload lock of this kind until `trx` ends (other accounts are not held up, bar a hash collision). */
export async function lockAccountUploads(trx: Knex.Transaction, kind: keyof typeof LOCK_SPACES, workspaceId: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [LOCK_SPACES[kind], workspaceId]);
}

/** A refusal at a limit: its status, code and message, counted in the metric. */
export function uploadLimitReached(limit: UploadLimit, status: number, code: string, message: string): DomainError {
  uploadLimitRefusalsTotal.inc({ limit });
  return new DomainError(status, code, message);
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(2);
}

function hoursText(hours: number): string {
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

export const UPLOAD_LIMIT_MSG = {
  tusUploads: (max: number, expirationHours: number) =>
    `Too many unfinished uploads: at most ${max} at once. Finish or cancel one before starting another (an unfinished upload is removed ${hoursText(expirationHours)} after it starts).`,
  tusBytes: (maxBytes: number, heldBytes: number, size: number, expirationHours: number) =>
    `Unfinished uploads may hold at most ${megabytes(maxBytes)}MB at once: ${megabytes(heldBytes)}MB are in unfinished uploads and this file is ${megabytes(size)}MB. Finish or cancel one first (an unfinished upload is removed ${hoursText(expirationHours)} after it starts).`,
  draftImages: ENHANCE_MSG.limitReached,
  draftReferences: (max: number, minutes: number) =>
    `Limit reached: maximum ${max} attachments waiting in a draft. Run a job with them, or upload more once unused ones are removed (${minutes} minutes after upload).`,
  draftWaiting: (max: number, minutes: number) =>
    `Too many draft uploads not yet added to a draft: at most ${max} at once. Add them to their draft, or upload more once unused ones are removed (${minutes} minutes after upload).`,
};

/** The most attachments any model takes in one job (the spec's Style Transfer 6): a draft keeps at most this many waiting. */
export const DRAFT_WAITING_REFERENCES_MAX = Math.max(...ENHANCE_MODEL_OPTIONS.map((o) => o.maxReferences));
