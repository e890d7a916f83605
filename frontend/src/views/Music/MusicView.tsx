import { useAtomValue } from 'jotai';
import { useCallback, useEffect, useState, type ReactElement } from 'react';
import { MUSIC_ACCEPT, MUSIC_MAX_BYTES, MUSIC_MSG, MUSIC_NAME_MAX_LENGTH, clockText } from '../../../../domain/music';
import { apiErrorMessage } from '../../api/client';
import { deleteMusicTrack, fetchMusicTracks, renameMusicTrack, uploadMusicTrack, type MusicTrackView } from '../../api/music';
import { currentWorkspaceAtom, workspaceAllowsAtom } from '../../atoms/workspace';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { Icon } from '../../components/Icon';
import { ProgressBar } from '../../components/ProgressBar';
import { RoleNote } from '../../components/RoleNote';
import { LoadingState } from '../../components/Spinner';
import { SOMETHING_WENT_WRONG, useLoad } from '../../components/useLoad';
import './music.css';

const FORMAT_LABEL: Record<MusicTrackView['format'], string> = { mp3: 'MP3', wav: 'WAV', m4a: 'M4A', aac: 'AAC', flac: 'FLAC' };

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

type Uploading = { name: string; percent: number } | null;

/**
 * The workspace's music (issue 44): tracks new videos may play under their clips. Members upload (MP3, WAV, M4A/AAC or
 * FLAC, at most 20 MB and 10 minutes; the server probes each file), rename and delete; everyone plays them.
 */
export function MusicView(): ReactElement {
  const workspace = useAtomValue(currentWorkspaceAtom);
  const allows = useAtomValue(workspaceAllowsAtom);
  const workspaceId = workspace?.id ?? null;
  const read = useCallback(() => (workspaceId ? fetchMusicTracks(workspaceId) : Promise.reject(new Error(SOMETHING_WENT_WRONG))), [workspaceId]);
  const [state] = useLoad(read);
  const [tracks, setTracks] = useState<MusicTrackView[] | null>(null);
  const [uploading, setUploading] = useState<Uploading>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const [deleting, setDeleting] = useState<MusicTrackView | null>(null);
  const mayEdit = allows('edit');

  useEffect(() => {
    if (state.status === 'done') setTracks(state.data);
  }, [state]);

  if (state.status === 'loading' || (state.status === 'done' && !tracks)) return <LoadingState label="Loading music..." />;
  if (state.status === 'error' || !tracks || !workspaceId) {
    return (
      <section className="view" aria-labelledby="music-title">
        <header className="view-header">
          <h1 id="music-title">Music</h1>
        </header>
        <p className="form-error" role="alert">
          {state.status === 'error' ? state.message : SOMETHING_WENT_WRONG}
        </p>
      </section>
    );
  }

  async function upload(files: File[]): Promise<void> {
    setError(null);
    setNotice(null);
    for (const file of files) {
      if (file.size > MUSIC_MAX_BYTES) {
        setError(`${file.name}: ${MUSIC_MSG.tooLarge}`);
        continue;
      }
      setUploading({ name: file.name, percent: 0 });
      try {
        const track = await uploadMusicTrack(workspaceId as string, file, (f) => setUploading({ name: file.name, percent: Math.round(f * 100) }));
        setTracks((current) => [track, ...(current ?? [])]);
        setNotice(`${track.name} added.`);
      } catch (err) {
        setError(`${file.name}: ${err instanceof Error ? err.message : SOMETHING_WENT_WRONG}`);
      } finally {
        setUploading(null);
      }
    }
  }

  async function saveName(): Promise<void> {
    if (!renaming) return;
    const name = renaming.name.trim();
    if (!name) {
      setError(MUSIC_MSG.nameRequired);
      return;
    }
    try {
      const track = await renameMusicTrack(workspaceId as string, renaming.id, name);
      setTracks((current) => (current ?? []).map((t) => (t.id === track.id ? track : t)));
      setRenaming(null);
      setError(null);
      setNotice('Track renamed.');
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    }
  }

  return (
    <section className="view music-view" aria-labelledby="music-title">
      <header className="view-header">
        <h1 id="music-title">Music</h1>
        <p className="muted music-lede">Tracks your videos can play under their clips. Choose one for a video in Video Assembly.</p>
      </header>
      {!mayEdit && <RoleNote what="add or delete music" />}
      {mayEdit && (
        <div className="panel music-upload">
          <label className="button button-primary" htmlFor="music-file">
            <Icon name="upload" size={18} /> Upload music
          </label>
          <input
            id="music-file"
            className="visually-hidden"
            type="file"
            multiple
            accept={MUSIC_ACCEPT}
            disabled={uploading !== null}
            onChange={(e) => {
              const files = [...(e.target.files ?? [])];
              e.target.value = '';
              if (files.length) void upload(files);
            }}
          />
          <p className="field-hint">MP3, WAV, M4A/AAC or FLAC, at most 20 MB and 10 minutes each.</p>
          {uploading && (
            <div className="music-progress" aria-live="polite">
              <ProgressBar label={`Uploading ${uploading.name}`} percent={uploading.percent} />
              <p className="muted">
                Uploading {uploading.name}: {uploading.percent}%
              </p>
            </div>
          )}
        </div>
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p className="music-notice" role="status">
          {notice}
        </p>
      )}
      {tracks.length === 0 ? (
        <p className="empty-state muted">No music yet{mayEdit ? ': upload a track to use it in your videos.' : '.'}</p>
      ) : (
        <ul className="music-list" aria-label="Music tracks">
          {tracks.map((track) => (
            <li key={track.id} className="panel music-track">
              <div className="music-track-head">
                {renaming?.id === track.id ? (
                  <form
                    className="music-rename"
                    onSubmit={(e) => {
                      e.preventDefault();
                      void saveName();
                    }}
                  >
                    <label className="visually-hidden" htmlFor={`music-name-${track.id}`}>
                      Name of {track.name}
                    </label>
                    <input id={`music-name-${track.id}`} value={renaming.name} maxLength={MUSIC_NAME_MAX_LENGTH} onChange={(e) => setRenaming({ id: track.id, name: e.target.value })} autoFocus />
                    <button type="submit" className="button button-primary">
                      Save
                    </button>
                    <button type="button" className="button button-ghost" onClick={() => setRenaming(null)}>
                      Cancel
                    </button>
                  </form>
                ) : (
                  <h2 className="music-track-name">{track.name}</h2>
                )}
                <p className="muted music-track-facts">
                  {clockText(track.durationSeconds)} · {FORMAT_LABEL[track.format]} · {sizeText(track.sizeBytes)}
                </p>
              </div>
              <audio className="music-player" controls preload="none" src={track.url} aria-label={`Play ${track.name}`} />
              {mayEdit && renaming?.id !== track.id && (
                <div className="music-track-actions">
                  <button type="button" className="button button-secondary" aria-label={`Rename ${track.name}`} onClick={() => setRenaming({ id: track.id, name: track.name })}>
                    <Icon name="pencil" size={16} /> Rename
                  </button>
                  <button type="button" className="button button-secondary" aria-label={`Delete ${track.name}`} onClick={() => setDeleting(track)}>
                    <Icon name="trash" size={16} /> Delete
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title="Delete this track?"
          onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await deleteMusicTrack(workspaceId, deleting.id);
              setTracks((current) => (current ?? []).filter((t) => t.id !== deleting.id));
              setNotice(`${deleting.name} deleted.`);
              setError(null);
            } catch (err) {
              setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
            } finally {
              setDeleting(null);
            }
          }}
        >
          {deleting.name} will no longer play in new videos. Videos already made keep their sound.
        </ConfirmDeleteDialog>
      )}
    </section>
  );
}
