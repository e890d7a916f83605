/**
 * A workspace's music tracks (issue 44 item 3): upload, list, rename, delete, and the track an assembly plays. A track
 * is accepted by probing its content with ffprobe and decoding it, never by its name: MP3, WAV, M4A (AAC or ALAC),
 * ADTS AAC or FLAC, at most MUSIC_MAX_BYTES and MUSIC_MAX_SECONDS. The original bytes are stored at
 * videos/music/<workspaceId>/<trackId>.<ext>; a refused file stores nothing (no object, no row).
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Knex } from 'knex';
import { ASSEMBLY_ACTIVE_STATUSES, type EditingConfig } from '../../domain/assembly';
import type { SoundtrackSource } from '../../domain/assemblyTimeline';
import { DomainError } from '../../domain/errors';
import {
  MUSIC_CODES,
  MUSIC_MAX_BYTES,
  MUSIC_MAX_SECONDS,
  MUSIC_MIME,
  MUSIC_MSG,
  cleanTrackName,
  type MusicFormat,
  type MusicSetting,
  type MusicTrackView,
} from '../../domain/music';
import { decodedAudioSeconds, probeAudio, type AudioProbe } from '../../providers/media/ffmpeg';
import { fileUrl, type Bucket, type Storage } from '../../storage';

type Db = Knex | Knex.Transaction;

export const MUSIC_BUCKET: Bucket = 'videos';

/** The folder of a workspace's tracks in MUSIC_BUCKET (removed with the workspace). */
export function musicFolder(workspaceId: string): string {
  return `music/${workspaceId}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface MusicTrackRow {
  id: string;
  workspace_id: string;
  name: string;
  format: MusicFormat;
  mime: string;
  duration_seconds: number | string;
  size_bytes: number | string;
  channels: number;
  sample_rate: number;
  storage_bucket: string;
  storage_path: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

function notFound(): DomainError {
  return new DomainError(404, MUSIC_CODES.notFound, MUSIC_MSG.notFound);
}

function viewOf(storage: Storage, row: MusicTrackRow): MusicTrackView {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    format: row.format,
    mime: row.mime,
    durationSeconds: Number(row.duration_seconds),
    sizeBytes: Number(row.size_bytes),
    channels: row.channels,
    sampleRate: row.sample_rate,
    url: storage.urls.sign(MUSIC_BUCKET, row.storage_path),
    createdAt: new Date(row.created_at).toISOString(),
    createdBy: row.created_by,
  };
}

/** The workspace's track `trackId` (404 for another workspace's or a missing one, as if it did not exist). */
export async function findTrack(db: Db, workspaceId: string, trackId: string): Promise<MusicTrackRow> {
  if (!UUID.test(trackId)) throw notFound();
  const row = (await db('music_tracks').where({ id: trackId.toLowerCase(), workspace_id: workspaceId }).first()) as MusicTrackRow | undefined;
  if (!row) throw notFound();
  return row;
}

export async function listMusicTracks(knex: Knex, storage: Storage, workspaceId: string): Promise<MusicTrackView[]> {
  const rows = (await knex('music_tracks')
    .where({ workspace_id: workspaceId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])) as MusicTrackRow[];
  return rows.map((row) => viewOf(storage, row));
}

/** The names of the workspace's tracks by id (for the chat and the dry run's words). */
export async function trackNames(db: Db, workspaceId: string): Promise<Array<{ id: string; name: string; durationSeconds: number }>> {
  const rows = (await db('music_tracks').where({ workspace_id: workspaceId }).orderBy('created_at', 'desc').select('id', 'name', 'duration_seconds')) as Array<{
    id: string;
    name: string;
    duration_seconds: string | number;
  }>;
  return rows.map((r) => ({ id: r.id, name: r.name, durationSeconds: Number(r.duration_seconds) }));
}

// ---------------------------------------------------------------------------------------------------------------
// What an uploaded file is

/** The audio of a probe as one of MUSIC_FORMATS, or the refusal it gets. */
export function musicFormatOf(probe: AudioProbe): { format: MusicFormat; stream: AudioProbe['streams'][number] } | { refused: 'notAudio' | 'unsupported' } {
  const audio = probe.streams.filter((s) => s.type === 'audio');
  // a cover picture (an MP3's or M4A's artwork) is fine; a moving picture makes it a video, not a track
  const video = probe.streams.filter((s) => s.type === 'video' && !s.attachedPicture);
  if (audio.length === 0 || video.length > 0) return { refused: 'notAudio' };
  const stream = audio[0];
  const containers = probe.formatName.split(',');
  const is = (name: string) => containers.includes(name);
  if (is('mp3') && stream.codec === 'mp3') return { format: 'mp3', stream };
  if (is('wav') && stream.codec.startsWith('pcm_')) return { format: 'wav', stream };
  if (is('flac') && stream.codec === 'flac') return { format: 'flac', stream };
  if (is('aac') && stream.codec === 'aac') return { format: 'aac', stream };
  if (is('m4a') && (stream.codec === 'aac' || stream.codec === 'alac')) return { format: 'm4a', stream };
  return { refused: 'unsupported' };
}

/**
 * Checks the file at `localPath` (`sizeBytes` long, read by the caller within MUSIC_MAX_BYTES) and answers what it
 * is; a DomainError 4xx with the rule's text when it is not an acceptable track.
 */
export async function inspectMusicFile(localPath: string, sizeBytes: number): Promise<{ format: MusicFormat; durationSeconds: number; channels: number; sampleRate: number }> {
  if (sizeBytes === 0) throw new DomainError(400, MUSIC_CODES.empty, MUSIC_MSG.empty);
  if (sizeBytes > MUSIC_MAX_BYTES) throw new DomainError(413, MUSIC_CODES.tooLarge, MUSIC_MSG.tooLarge);
  const notAudio = () => new DomainError(400, MUSIC_CODES.notAudio, MUSIC_MSG.notAudio);
  let probe: AudioProbe;
  try {
    probe = await probeAudio(localPath);
  } catch {
    throw notAudio();
  }
  const kind = musicFormatOf(probe);
  if ('refused' in kind) throw kind.refused === 'notAudio' ? notAudio() : new DomainError(400, MUSIC_CODES.unsupported, MUSIC_MSG.unsupported);
  const declared = kind.stream.durationSeconds ?? probe.durationSeconds;
  if (declared !== null && declared > MUSIC_MAX_SECONDS + 0.5) throw new DomainError(400, MUSIC_CODES.tooLong, MUSIC_MSG.tooLong);
  // the header may claim anything: the track is what decodes
  let decoded: number;
  try {
    decoded = await decodedAudioSeconds(localPath);
  } catch {
    throw notAudio();
  }
  if (!(decoded > 0.1)) throw notAudio();
  if (decoded > MUSIC_MAX_SECONDS + 0.5) throw new DomainError(400, MUSIC_CODES.tooLong, MUSIC_MSG.tooLong);
  const durationSeconds = Math.round(Math.min(decoded, declared ?? decoded) * 1000) / 1000;
  return { format: kind.format, durationSeconds, channels: kind.stream.channels ?? 2, sampleRate: kind.stream.sampleRate ?? 48000 };
}

/** Stores a checked track and records it; the object goes again if the row cannot be written. */
export async function addMusicTrack(
  knex: Knex,
  storage: Storage,
  input: { workspaceId: string; userId: string; localPath: string; sizeBytes: number; name: string | null | undefined },
): Promise<MusicTrackView> {
  const info = await inspectMusicFile(input.localPath, input.sizeBytes);
  const id = randomUUID();
  const name = cleanTrackName(input.name) || 'Untitled track';
  const storagePath = `${musicFolder(input.workspaceId)}/${id}.${info.format}`;
  await storage.objects.put(MUSIC_BUCKET, storagePath, createReadStream(input.localPath));
  try {
    const [row] = (await knex('music_tracks')
      .insert({
        id,
        workspace_id: input.workspaceId,
        name,
        format: info.format,
        mime: MUSIC_MIME[info.format],
        duration_seconds: info.durationSeconds,
        size_bytes: input.sizeBytes,
        channels: info.channels,
        sample_rate: info.sampleRate,
        storage_bucket: MUSIC_BUCKET,
        storage_path: storagePath,
        created_by: input.userId,
      })
      .returning('*')) as MusicTrackRow[];
    return viewOf(storage, row);
  } catch (err) {
    await storage.objects.remove(MUSIC_BUCKET, [storagePath]).catch(() => undefined);
    throw err;
  }
}

export async function renameMusicTrack(knex: Knex, storage: Storage, input: { workspaceId: string; trackId: string; name: string }): Promise<MusicTrackView> {
  const name = cleanTrackName(input.name);
  if (!name) throw new DomainError(400, MUSIC_CODES.invalid, MUSIC_MSG.nameRequired);
  const track = await findTrack(knex, input.workspaceId, input.trackId);
  const [row] = (await knex('music_tracks').where({ id: track.id }).update({ name, updated_at: knex.fn.now() }).returning('*')) as MusicTrackRow[];
  return viewOf(storage, row);
}

/**
 * Deletes a track: refused (409) while an assembly that plays it still renders; the projects whose editing config
 * names it go back to no music; the file goes once the row has.
 */
export async function deleteMusicTrack(knex: Knex, storage: Storage, input: { workspaceId: string; trackId: string }): Promise<void> {
  const removed = await knex.transaction(async (trx) => {
    const track = await findTrack(trx, input.workspaceId, input.trackId);
    await trx('music_tracks').where({ id: track.id }).forUpdate().first('id');
    const rendering = await trx('assembly_jobs')
      .where({ workspace_id: input.workspaceId })
      .whereIn('status', ASSEMBLY_ACTIVE_STATUSES)
      .whereRaw("options->'timeline'->'soundtrack'->>'trackId' = ?", [track.id])
      .first('id');
    if (rendering) throw new DomainError(409, MUSIC_CODES.inUse, MUSIC_MSG.inUse);
    await trx('aesthetic_chats')
      .where({ workspace_id: input.workspaceId })
      .whereRaw("editing_config->'music'->>'track_id' = ?", [track.id])
      .update({ editing_config: trx.raw("jsonb_set(editing_config, '{music}', 'null'::jsonb)"), updated_at: trx.fn.now() });
    await trx('music_tracks').where({ id: track.id }).delete();
    return track;
  });
  await storage.objects.remove(MUSIC_BUCKET, [removed.storage_path]).catch(() => undefined);
}

// ---------------------------------------------------------------------------------------------------------------
// The track an assembly plays

/**
 * The track `editing.music` names, as the timeline takes it; null without music. A track that is no longer the
 * workspace's is refused (404), so an assembly never renders silently when music was chosen. Inside a transaction the
 * row is locked against a delete until the caller commits.
 */
export async function soundtrackSourceFor(db: Db, workspaceId: string, editing: Pick<EditingConfig, 'music'>): Promise<SoundtrackSource | null> {
  const music = editing.music ?? null;
  if (!music) return null;
  const query = db('music_tracks').where({ id: music.track_id, workspace_id: workspaceId });
  const row = (await ('isTransaction' in db && db.isTransaction ? query.forShare() : query).first()) as MusicTrackRow | undefined;
  if (!row) throw notFound();
  return { trackId: row.id, src: fileUrl(MUSIC_BUCKET, row.storage_path), durationSeconds: Number(row.duration_seconds) };
}

/** A music setting made to fit its track: the workspace's own (404 otherwise), the offset before its end (400). */
export async function checkMusicSetting(db: Db, workspaceId: string, setting: MusicSetting | null): Promise<{ setting: MusicSetting | null; trackName: string | null }> {
  if (!setting) return { setting: null, trackName: null };
  const track = await findTrack(db, workspaceId, setting.track_id);
  if (setting.offset_seconds >= Number(track.duration_seconds)) throw new DomainError(400, MUSIC_CODES.invalid, MUSIC_MSG.offsetPastEnd);
  return { setting, trackName: track.name };
}
