/**
 * Everything that belongs to one user: the rows (for the data export's JSON) and the stored files (for the
 * export's files/ folder and for account deletion). Every query is scoped by the user's id, so nothing of
 * another user can come out of here.
 */
import type { Knex } from 'knex';
import { EXPORT_BUCKET, exportFolder } from '../../domain/accountData';
import { pendingImageFolder, PENDING_IMAGE_BUCKET } from '../../domain/imageEdit';
import { isBucket, parseFileUrl, type Bucket } from '../../storage';
import { storedFilesOf, type StoredFileRef } from '../content/storedFiles';

type Db = Knex | Knex.Transaction;
type Row = Record<string, unknown>;

/** The tables whose rows carry the user's id in `workspace_id` (draft images hang off drafts, the ledger off workspace_id). */
const USER_TABLES = [
  'projects',
  'renders',
  'images',
  'clips',
  'compiled_videos',
  'generated_content',
  'pending_approvals',
  'ai_image_edits',
  'video_generation_jobs',
  'assembly_jobs',
  'aesthetic_chats',
  'drafts',
  'draft_jobs',
  'credit_purchases',
  'data_exports',
  'comment_threads',
  'comments',
  'change_requests',
] as const;

export interface UserDataRows {
  profile: Row | null;
  projects: Row[];
  items: Record<Exclude<(typeof USER_TABLES)[number], 'projects'> | 'draft_images' | 'credit_reservations' | 'comments_in_other_workspaces', Row[]>;
  ledger: Row[];
}

/** The user's rows as stored (snake_case columns), without secrets: the password hash never leaves the database. */
export async function collectUserRows(db: Db, userId: string): Promise<UserDataRows> {
  const account = await db('users')
    .leftJoin('profiles', 'profiles.id', 'users.id')
    .where('users.id', userId)
    .first(
      'users.id',
      'users.email',
      'users.role',
      'users.created_at as account_created_at',
      'profiles.name',
      'profiles.credits',
      'profiles.reserved_credits',
      'profiles.total_credits_purchased',
      'profiles.total_credits_added',
      'profiles.total_clips_used',
      'profiles.total_images_used',
      'profiles.total_assemblies_used',
      'profiles.rejection_streak',
      'profiles.rejection_cooldown_until',
      'profiles.created_at',
      'profiles.updated_at',
    );
  const byTable: Record<string, Row[]> = {};
  // one after another: callers may pass a transaction, which is one connection
  for (const table of USER_TABLES) byTable[table] = await db(table).where({ workspace_id: userId }).orderBy(orderColumn(table));
  byTable.draft_images = await db('draft_images')
    .join('drafts', 'drafts.id', 'draft_images.draft_id')
    .where('drafts.workspace_id', userId)
    .orderBy('draft_images.created_at')
    .select('draft_images.*');
  byTable.credit_reservations = await db('credit_reservations').where({ workspace_id: userId }).orderBy('created_at');
  // what the user wrote in team workspaces (their text; the threads themselves are the team's)
  byTable.comments_in_other_workspaces = await db('comments').where({ created_by: userId }).whereNot({ workspace_id: userId }).orderBy('created_at');
  const ledger = await db('credit_transactions').where({ workspace_id: userId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  const { projects, ...items } = byTable;
  return { profile: (account as Row | undefined) ?? null, projects, items: items as UserDataRows['items'], ledger };
}

function orderColumn(table: string): string {
  return table === 'aesthetic_chats' ? 'updated_at' : 'created_at';
}

/** A stored file of the user and the row it came from (for the export's manifest). */
export interface UserFile extends StoredFileRef {
  source: string;
  sourceId: string;
}

function add(files: Map<string, UserFile>, ref: StoredFileRef | null, source: string, sourceId: string): void {
  if (!ref) return;
  const key = `${ref.bucket}/${ref.path}`;
  if (!files.has(key)) files.set(key, { ...ref, source, sourceId });
}

export interface UserFileOptions {
  /** the zips of earlier exports (a deletion removes them; an export does not include them) */
  includeExports: boolean;
  /** items still pending (what the user has), or every item whatever its state (a deletion, after it ended them) */
  approvals: 'pending' | 'all';
}

/**
 * Every stored file the user's rows point at: content with thumbnails (and renders' previews), pending items (original, preview,
 * thumbnail), draft images, and finished exports when `includeExports`. Deduplicated by bucket and path.
 */
export async function listUserFiles(db: Db, userId: string, options: UserFileOptions): Promise<UserFile[]> {
  const files = new Map<string, UserFile>();
  const columns = ['id', 'storage_bucket', 'storage_path', 'thumbnail_path', 'file_url'];
  for (const table of ['renders', 'images', 'clips', 'compiled_videos'] as const) {
    // a render has its preview too (services/content/renderThumbnails.ts)
    const rows = await db(table).where({ workspace_id: userId }).orderBy('created_at').select(table === 'renders' ? [...columns, 'preview_path'] : columns);
    for (const row of rows) {
      for (const ref of storedFilesOf({ storageBucket: row.storage_bucket, storagePath: row.storage_path, thumbnailPath: row.thumbnail_path, previewPath: row.preview_path, fileUrl: row.file_url })) {
        add(files, ref, table, row.id);
      }
    }
  }
  const generated = await db('generated_content').where({ workspace_id: userId }).orderBy('created_at').select('id', 'storage_bucket', 'storage_path', 'file_url');
  for (const row of generated) {
    for (const ref of storedFilesOf({ storageBucket: row.storage_bucket, storagePath: row.storage_path, fileUrl: row.file_url })) add(files, ref, 'generated_content', row.id);
  }
  // decided items: an approved original lives on as a content row above; rejected and expired ones are removed
  const pending = await db('pending_approvals')
    .where({ workspace_id: userId })
    .modify((q) => {
      if (options.approvals === 'pending') q.where({ status: 'pending' });
    })
    .orderBy('created_at')
    .select('id', 'original_bucket', 'original_path', 'watermarked_bucket', 'watermarked_path', 'thumbnail_path');
  for (const row of pending) {
    if (isBucket(row.original_bucket)) {
      add(files, { bucket: row.original_bucket, path: row.original_path }, 'pending_approvals', row.id);
      if (row.thumbnail_path) add(files, { bucket: row.original_bucket, path: row.thumbnail_path }, 'pending_approvals', row.id);
    }
    if (isBucket(row.watermarked_bucket)) add(files, { bucket: row.watermarked_bucket, path: row.watermarked_path }, 'pending_approvals', row.id);
  }
  const draftImages = await db('draft_images')
    .join('drafts', 'drafts.id', 'draft_images.draft_id')
    .where('drafts.workspace_id', userId)
    .select('draft_images.id', 'draft_images.source_url', 'draft_images.resolved_url');
  for (const row of draftImages) {
    for (const url of [row.source_url, row.resolved_url]) if (typeof url === 'string') add(files, parseFileUrl(url), 'draft_images', row.id);
  }
  if (options.includeExports) {
    const exports = await db('data_exports').where({ workspace_id: userId }).whereNotNull('storage_path').select('id', 'storage_bucket', 'storage_path');
    for (const row of exports) if (isBucket(row.storage_bucket)) add(files, { bucket: row.storage_bucket, path: row.storage_path }, 'data_exports', row.id);
  }
  return [...files.values()];
}

/**
 * Folders that hold only this user's files, whatever rows say (a job that died before writing its row):
 * uploads and their thumbnails, clips, exports, and the working folders of the user's image edits.
 */
export async function userFolders(db: Db, userId: string): Promise<Array<{ bucket: Bucket; prefix: string }>> {
  const folders: Array<{ bucket: Bucket; prefix: string }> = [
    { bucket: 'renders', prefix: userId },
    { bucket: 'renders', prefix: `thumbs/${userId}` },
    { bucket: 'clips', prefix: userId },
    { bucket: 'drafts', prefix: userId },
    { bucket: 'videos', prefix: userId },
    // the workspace's brand kit logo (services/workspaces/brandKit.ts)
    { bucket: 'images', prefix: `brand/${userId}` },
    // the workspace's music tracks (services/content/musicTracks.ts)
    { bucket: 'videos', prefix: `music/${userId}` },
    { bucket: EXPORT_BUCKET, prefix: exportFolder(userId) },
  ];
  const approvals = await db('pending_approvals').where({ workspace_id: userId }).select('id');
  const edits = await db('ai_image_edits').where({ workspace_id: userId }).select(db.raw("edit_data->>'approvalId' as approval_id"));
  const approvalIds = new Set<string>([...approvals.map((a: { id: string }) => a.id), ...edits.map((e: { approval_id: string | null }) => e.approval_id).filter((id): id is string => typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id))]);
  for (const id of approvalIds) folders.push({ bucket: PENDING_IMAGE_BUCKET, prefix: pendingImageFolder(id) });
  return folders;
}
