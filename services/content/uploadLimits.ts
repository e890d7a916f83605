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
import { ENHANCE_MODEL_OPTIONS } from '../../domain/enhanceRenders';
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

export { UPLOAD_LIMIT_MSG } from '../../domain/uploadLimits';

/** The most attachments any model takes in one job (the spec's Style Transfer 6): a draft keeps at most this many waiting. */
export const DRAFT_WAITING_REFERENCES_MAX = Math.max(...ENHANCE_MODEL_OPTIONS.map((o) => o.maxReferences));
