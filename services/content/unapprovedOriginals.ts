/**
 * Pay on approval is absolute (DESIGN.md, Credits): until an item is approved only its watermarked preview leaves
 * the server. The original of a pending item, and of a rejected or expired one (whose files are removed, but a removal
 * may fail and leave the file behind), is refused by every route that serves a stored file, even through a link
 * minted earlier. So is the item's thumbnail: it is made from the original (480 px, unwatermarked) for the library
 * item the approval saves, and nothing before the approval needs it (the queue shows the watermarked preview).
 */
import type { Knex } from 'knex';

export interface FileLocation {
  bucket: string;
  path: string;
}

/**
 * Whether the file is the original of an item that is not approved, or the thumbnail made from it (kept beside it,
 * domain/approvals.ts): a probe of the partial indexes on (original_bucket, original_path) and
 * (original_bucket, thumbnail_path) (db/migrations/20261127000200_unapproved_original_lookup.ts).
 */
export async function isUnapprovedOriginal(db: Knex, file: FileLocation): Promise<boolean> {
  const row = await db('pending_approvals')
    .where('original_bucket', file.bucket)
    .where((q) => q.where('original_path', file.path).orWhere('thumbnail_path', file.path))
    // a literal, so the planner matches the partial indexes' predicate
    .whereRaw("status <> 'approved'")
    .first(db.raw('1 as hit'));
  return Boolean(row);
}

/** The keys (`bucket/path`) of every original and thumbnail of the user's items that are not approved. */
export async function unapprovedFilesOf(db: Knex, workspaceId: string): Promise<Set<string>> {
  const rows = (await db('pending_approvals')
    .where({ workspace_id: workspaceId })
    .whereRaw("status <> 'approved'")
    .select('original_bucket', 'original_path', 'thumbnail_path')) as Array<{ original_bucket: string; original_path: string; thumbnail_path: string | null }>;
  const keys = new Set<string>();
  for (const row of rows) {
    keys.add(`${row.original_bucket}/${row.original_path}`);
    // the thumbnail is made from the original and kept beside it (domain/approvals.ts)
    if (row.thumbnail_path) keys.add(`${row.original_bucket}/${row.thumbnail_path}`);
  }
  return keys;
}

/**
 * What of the user's stored files may leave in their data export: the originals of items that are not approved (a
 * pending item's, and a pending assembly's compiled video row, which points at the same file) and the thumbnails made
 * from them are left out; a pending item is carried by its watermarked preview.
 */
export async function exportableFiles<T extends FileLocation>(db: Knex, workspaceId: string, files: readonly T[]): Promise<T[]> {
  const unapproved = await unapprovedFilesOf(db, workspaceId);
  return files.filter((file) => !unapproved.has(`${file.bucket}/${file.path}`));
}
