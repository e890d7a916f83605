import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { DEFAULT_MUSIC_SETTING, MUSIC_MAX_FADE_SECONDS, musicSummary, type MusicSetting } from '../../../../domain/music';
import { apiErrorMessage } from '../../api/client';
import { setProjectMusic, type MusicTrackView } from '../../api/music';
import type { AestheticChatState } from '../../api/videoAssembly';

const FAILED = 'Something went wrong. Please try again.';

interface MusicForm {
  trackId: string;
  offset: string;
  volume: number;
  fadeIn: string;
  fadeOut: string;
}

function formOf(music: MusicSetting | null): MusicForm {
  const m = music ?? { track_id: '', ...DEFAULT_MUSIC_SETTING };
  return { trackId: m.track_id, offset: String(m.offset_seconds), volume: Math.round(m.volume * 100), fadeIn: String(m.fade_in_seconds), fadeOut: String(m.fade_out_seconds) };
}

const seconds = (text: string): number => {
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? n : 0;
};

interface MusicPickerProps {
  projectId: string | null;
  /** the workspace's tracks (null while they load) */
  tracks: MusicTrackView[] | null;
  /** the music the project's edit plays now (the chat's editing config) */
  music: MusicSetting | null;
  onState: (state: AestheticChatState) => void;
  onOpenMusic: () => void;
}

/**
 * The music of the video (issue 44): one of the workspace's tracks or none, where in it to start, how loud, and how
 * long it fades in and out. Saved per project with the chat's editing config, so the preview and the assembly play it.
 */
export function MusicPicker({ projectId, tracks, music, onState, onOpenMusic }: MusicPickerProps): ReactElement {
  const [form, setForm] = useState<MusicForm>(() => formOf(music));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const musicKey = JSON.stringify(music);
  useEffect(() => {
    setForm(formOf(music));
    setError(null);
    // the key stands for the setting
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [musicKey]);

  const track = tracks?.find((t) => t.id === form.trackId) ?? null;
  const names = new Map((tracks ?? []).map((t) => [t.id, t.name]));

  async function onSubmit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (!projectId) return;
    setBusy(true);
    setError(null);
    try {
      const next = await setProjectMusic(
        projectId,
        form.trackId
          ? { trackId: form.trackId, offsetSeconds: seconds(form.offset), volume: form.volume / 100, fadeInSeconds: seconds(form.fadeIn), fadeOutSeconds: seconds(form.fadeOut) }
          : { trackId: null },
      );
      onState(next);
    } catch (err) {
      setError(apiErrorMessage(err, FAILED));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="panel assembly-music" aria-labelledby="assembly-music-title">
      <h2 id="assembly-music-title">Music</h2>
      <p className="muted assembly-music-now" role="status">
        {musicSummary(music, music ? (names.get(music.track_id) ?? 'the chosen track') : null)}
      </p>
      {!projectId ? (
        <p className="muted">Choose a project to pick the music of its video.</p>
      ) : tracks !== null && tracks.length === 0 ? (
        <p className="muted">
          No music in this workspace yet.{' '}
          <button type="button" className="link-button" onClick={onOpenMusic}>
            Add tracks on the Music page
          </button>
        </p>
      ) : (
        <form className="assembly-music-form" onSubmit={(e) => void onSubmit(e)} aria-label="Music of the video">
          <div className="field">
            <label htmlFor="assembly-music-track">Track</label>
            <select id="assembly-music-track" value={form.trackId} onChange={(e) => setForm({ ...form, trackId: e.target.value })} disabled={busy || tracks === null}>
              <option value="">No music (silent)</option>
              {(tracks ?? []).map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </div>
          {form.trackId && (
            <div className="assembly-music-grid">
              <div className="field">
                <label htmlFor="assembly-music-offset">Start at (seconds)</label>
                <input
                  id="assembly-music-offset"
                  type="number"
                  inputMode="decimal"
                  min={0}
                  max={track ? Math.max(0, Math.floor(track.durationSeconds) - 1) : undefined}
                  step={0.5}
                  value={form.offset}
                  onChange={(e) => setForm({ ...form, offset: e.target.value })}
                />
              </div>
              <div className="field">
                <label htmlFor="assembly-music-volume">Volume: {form.volume}%</label>
                <input id="assembly-music-volume" type="range" min={5} max={100} step={5} value={form.volume} onChange={(e) => setForm({ ...form, volume: Number(e.target.value) })} />
              </div>
              <div className="field">
                <label htmlFor="assembly-music-fade-in">Fade in (seconds)</label>
                <input id="assembly-music-fade-in" type="number" inputMode="decimal" min={0} max={MUSIC_MAX_FADE_SECONDS} step={0.5} value={form.fadeIn} onChange={(e) => setForm({ ...form, fadeIn: e.target.value })} />
              </div>
              <div className="field">
                <label htmlFor="assembly-music-fade-out">Fade out (seconds)</label>
                <input id="assembly-music-fade-out" type="number" inputMode="decimal" min={0} max={MUSIC_MAX_FADE_SECONDS} step={0.5} value={form.fadeOut} onChange={(e) => setForm({ ...form, fadeOut: e.target.value })} />
              </div>
            </div>
          )}
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="button button-secondary" disabled={busy}>
            {busy ? 'Saving...' : 'Use this music'}
          </button>
        </form>
      )}
    </section>
  );
}
