/**
 * The clips an assembly may use: the user's approved clips (a clips row exists only once its approval saved it),
 * from any of the user's projects. Shared by the API (listing, dry-run, start) and the workflow's admission
 * activity, so both check the same rules and build the same timeline.
 */
import type { BrandSource } from '../../domain/brandVideo';
import type { Knex } from 'knex';
import {
  ASSEMBLY_ERROR_CODES,
  ASSEMBLY_MSG,
  MAX_ASSEMBLY_CLIPS,
  cannotMixMessage,
  orientationOfPlatform,
  type AssemblyClip,
  type AssemblyFormat,
  type AssemblyPlatform,
  type EditingConfig,
} from '../../domain/assembly';
import { buildAssemblyTimeline, type AssemblyEdit, type JunctionOverride, type SoundtrackSource, type TimelineSourceClip } from '../../domain/assemblyTimeline';
import { CLIP_DURATION_SECONDS } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import { clipOrientation, type Orientation } from '../../domain/orientation';
import { ERROR_CODES, MSG } from '../../domain/messages';
import { fileUrl, type Storage } from '../../storage';
import { canCreateContent } from '../billing/credits';
import { signedThumbnailOf, signedUrlOf, storedFileOf } from '../content/storedFiles';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Db = Knex | Knex.Transaction;

/** A clip row with its project's name, as the queries below read it. */
export interface AssemblyClipRow {
  id: string;
  project_id: string;
  project_name: string;
  file_url: string;
  file_name: string;
  duration: string | number | null;
  camera_movement: string | null;
  custom_name: string | null;
  created_at: Date | string;
  thumbnail_url: string | null;
  thumbnail_path: string | null;
  analysis_data: Record<string, unknown> | null;
  storage_bucket: string | null;
  storage_path: string | null;
}

const COLUMNS = [
  'clips.id',
  'clips.project_id',
  'projects.name as project_name',
  'clips.file_url',
  'clips.file_name',
  'clips.duration',
  'clips.camera_movement',
  'clips.custom_name',
  'clips.created_at',
  'clips.thumbnail_url',
  'clips.thumbnail_path',
  'clips.analysis_data',
  'clips.storage_bucket',
  'clips.storage_path',
];

function ownedClips(db: Db, workspaceId: string) {
  return db('clips').join('projects', 'projects.id', 'clips.project_id').where('clips.workspace_id', workspaceId).where('projects.workspace_id', workspaceId);
}

function analysisOf(row: AssemblyClipRow): Record<string, unknown> {
  const data = row.analysis_data;
  return data && typeof data === 'object' && !Array.isArray(data) ? data : {};
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

export function clipAspectRatio(row: AssemblyClipRow): string | null {
  const analysis = analysisOf(row);
  return text(analysis.aspectRatio) ?? text(analysis.aspect_ratio);
}

export function orientationOfClip(row: AssemblyClipRow): Orientation {
  const analysis = analysisOf(row);
  return clipOrientation({ fileName: row.file_name, analysisAspectRatio: text(analysis.aspectRatio), aspectRatio: clipAspectRatio(row) });
}

/** Seconds the clip plays; a row without a duration counts as a standard clip. */
export function clipDuration(row: AssemblyClipRow): number {
  const n = Number(row.duration);
  return Number.isFinite(n) && n > 0 ? n : CLIP_DURATION_SECONDS;
}

export function clipDisplayName(row: AssemblyClipRow): string {
  return text(row.custom_name) ?? row.file_name;
}

/** The clip's file as the timeline names it: the unsigned /api/files/... URL of its stored file. */
export function timelineSourceOf(row: AssemblyClipRow): TimelineSourceClip {
  const file = storedFileOf({ storageBucket: row.storage_bucket, storagePath: row.storage_path, fileUrl: row.file_url });
  if (!file) throw new DomainError(409, ASSEMBLY_ERROR_CODES.clipFileMissing, `Clip ${clipDisplayName(row)} has no stored file`);
  return { id: row.id, src: fileUrl(file.bucket, file.path), durationSeconds: clipDuration(row) };
}

/** The spec's "Clip (for assembly)" with signed links. */
export function assemblyClipView(storage: Storage, row: AssemblyClipRow): AssemblyClip {
  const files = { storageBucket: row.storage_bucket, storagePath: row.storage_path, thumbnailPath: row.thumbnail_path, fileUrl: row.file_url };
  return {
    id: row.id,
    project_id: row.project_id,
    project_name: row.project_name,
    file_url: signedUrlOf(storage, files) ?? row.file_url,
    file_name: row.file_name,
    duration: clipDuration(row),
    camera_movement: row.camera_movement,
    custom_name: row.custom_name,
    created_at: new Date(row.created_at).toISOString(),
    thumbnail_url: signedThumbnailOf(storage, files),
    aspect_ratio: clipAspectRatio(row),
    analysis_data: analysisOf(row),
    orientation: orientationOfClip(row),
  };
}

/** Every approved clip of the user, newest first. */
export async function listOwnedClips(db: Db, workspaceId: string): Promise<AssemblyClipRow[]> {
  return ownedClips(db, workspaceId)
    .orderBy([{ column: 'clips.created_at', order: 'desc' }, { column: 'clips.id', order: 'desc' }])
    .select(COLUMNS) as Promise<AssemblyClipRow[]>;
}

/** The checks on a selection's size, before any row is read: none, or more than five. */
export function assertSelectionSize(clipIds: readonly string[]): void {
  if (clipIds.length === 0) throw new DomainError(400, ASSEMBLY_ERROR_CODES.noClips, ASSEMBLY_MSG.selectClip);
  if (clipIds.length > MAX_ASSEMBLY_CLIPS) throw new DomainError(400, ASSEMBLY_ERROR_CODES.tooManyClips, ASSEMBLY_MSG.maxClips);
  if (new Set(clipIds).size !== clipIds.length) throw new DomainError(400, 'VALIDATION_ERROR', 'Each clip can be used once in an assembly');
}

/**
 * The selected clips in the given order, each the user's own approved clip (another user's or a missing one is
 * 404, as if it did not exist), all of one orientation (the first clip's), which is returned with them.
 */
export async function loadSelectedClips(db: Db, workspaceId: string, clipIds: readonly string[]): Promise<{ rows: AssemblyClipRow[]; orientation: Orientation }> {
  assertSelectionSize(clipIds);
  const notFound = new DomainError(404, ASSEMBLY_ERROR_CODES.clipNotFound, 'Clip not found');
  if (!clipIds.every((id) => UUID.test(id))) throw notFound;
  const found = (await ownedClips(db, workspaceId).whereIn('clips.id', clipIds).select(COLUMNS)) as AssemblyClipRow[];
  const byId = new Map(found.map((row) => [row.id, row]));
  const rows = clipIds.map((id) => byId.get(id));
  if (rows.some((row) => !row)) throw notFound;
  const ordered = rows as AssemblyClipRow[];
  const orientation = orientationOfClip(ordered[0]);
  const other = ordered.map(orientationOfClip).find((o) => o !== orientation);
  if (other) throw new DomainError(400, ASSEMBLY_ERROR_CODES.mixedOrientation, cannotMixMessage(orientation, other));
  return { rows: ordered, orientation };
}

/** A platform that does not fit the clips' orientation is refused, not silently letterboxed. */
export function assertPlatformFits(platform: AssemblyPlatform, orientation: Orientation): void {
  const wanted = orientationOfPlatform(platform);
  if (wanted !== orientation) {
    throw new DomainError(400, ASSEMBLY_ERROR_CODES.mixedOrientation, `${platform === 'tiktok' ? 'TikTok' : 'YouTube'} needs ${wanted} clips; these clips are ${orientation}.`);
  }
}

export function timelineFor(
  rows: AssemblyClipRow[],
  platform: AssemblyPlatform,
  editing: EditingConfig,
  transitions?: JunctionOverride[],
  soundtrack?: SoundtrackSource | null,
  brand?: BrandSource | null,
  format?: AssemblyFormat,
): AssemblyEdit {
  return buildAssemblyTimeline({ clips: rows.map(timelineSourceOf), platform, format, editing, transitions, soundtrack, brand });
}

/**
 * The start rule for an assembly: free, so only the rejection cooldown and the pending-approval cap can refuse it
 * (spec 001 section 5: starting more is blocked at the limit), assemblies still rendering counted as pending.
 */
export async function assertAssemblyMayStart(db: Db, workspaceId: string): Promise<void> {
  const check = await canCreateContent(db, workspaceId, 'assembly');
  if (check.reason === 'cooldown') throw new DomainError(429, ERROR_CODES.rejectionStreakCooldown, MSG.rejectionStreakCooldown);
  // an assembly holds no reservation while it renders: the ones in flight count toward the cap here
  const running = await db('assembly_jobs').where({ workspace_id: workspaceId }).whereIn('status', ['pending', 'processing']).count<{ count: string }[]>('id as count');
  if (check.reason === 'pending_limit' || check.pendingCount + Number(running[0].count) >= check.limit) {
    throw new DomainError(409, ERROR_CODES.pendingLimitReached, MSG.pendingLimitReached(check.limit));
  }
}
