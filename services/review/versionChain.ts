/**
 * The version chain of pending items made by "request changes" (issue 42, acceptance 2): the item a requested job
 * makes is the next version of the rejected one, and the rejected item's threads carry over to it, each remembering
 * the version it was started on. Written in the transaction that records the new item (activities/approvals.ts).
 */
import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface VersionLink {
  requestId: string;
  previousApprovalId: string;
  previousVersion: number;
  previousFileName: string;
  /** the new item's version */
  version: number;
}

/** The version an item made by job `sourceJobId` takes, when a change request started that job; else null (version 1). */
export async function versionLinkOf(db: Db, workspaceId: string, sourceJobId: string | null): Promise<VersionLink | null> {
  // a job id of a change request is a uuid; items from elsewhere may name their job otherwise (a text column)
  if (!sourceJobId || !UUID.test(sourceJobId)) return null;
  const row = (await db('change_requests as r')
    .join('pending_approvals as a', 'a.id', 'r.approval_id')
    .where({ 'r.next_job_id': sourceJobId, 'r.workspace_id': workspaceId })
    .first('r.id', 'r.approval_id', 'a.version', 'a.file_name')) as { id: string; approval_id: string; version: number; file_name: string } | undefined;
  if (!row) return null;
  return { requestId: row.id, previousApprovalId: row.approval_id, previousVersion: row.version, previousFileName: row.file_name, version: row.version + 1 };
}

/**
 * Links the request to the item it produced and moves the earlier version's threads onto it (a thread keeps the
 * version it was started on, so the conversation and the versions read as one history).
 */
export async function carryThreadsOver(trx: Db, link: VersionLink, approvalId: string): Promise<void> {
  await trx('change_requests').where({ id: link.requestId }).update({ next_approval_id: approvalId });
  await trx('comment_threads')
    .where({ item_kind: 'approval', item_id: link.previousApprovalId })
    .update({ item_id: approvalId, on_version: trx.raw('coalesce(on_version, ?)', [link.previousVersion]) });
}
