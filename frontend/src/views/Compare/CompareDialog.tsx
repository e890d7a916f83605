import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent, type ReactElement, type RefObject, type WheelEvent } from 'react';
import { fetchCompareVersions, type CompareMedia, type CompareVersions } from '../../api/compare';
import { Dialog } from '../../components/Dialog';
import { IDENTITY, panBy, transformCss, versionLabel, zoomBy, type ViewTransform } from './compareView';
import './compare.css';

const PAN_STEP = 0.05;

/**
 * Compares an item with the render it started from or an earlier version of its chain (issue 42 item 3): side by
 * side or with a slider (one picture over the other), zoom and pan kept in step on both (drag, the mouse wheel, or
 * the keyboard: arrow keys pan, + and - zoom, 0 resets); for clips and videos, two players kept in step by one set of
 * controls. Stacked on a phone.
 */
export function CompareDialog({ itemId, title, onClose }: { itemId: string; title: string; onClose: () => void }): ReactElement {
  const [data, setData] = useState<CompareVersions | null>(null);
  const [failed, setFailed] = useState(false);
  const [otherId, setOtherId] = useState<string | null>(null);
  const [mode, setMode] = useState<'side' | 'slider'>('side');
  const [view, setView] = useState<ViewTransform>(IDENTITY);
  const [split, setSplit] = useState(50);

  useEffect(() => {
    const abort = new AbortController();
    fetchCompareVersions(itemId, abort.signal).then(
      (answer) => {
        setData(answer);
        setOtherId(answer.versions[0]?.id ?? null);
      },
      () => {
        if (!abort.signal.aborted) setFailed(true);
      },
    );
    return () => abort.abort();
  }, [itemId]);

  const versions = data?.versions ?? [];
  const index = versions.findIndex((v) => v.id === otherId);
  const other = index >= 0 ? versions[index] : null;
  const label = other ? versionLabel(other) : '';
  const video = data?.item.media === 'video' || other?.media === 'video';

  return (
    <Dialog title={`Compare: ${title}`} onClose={onClose} className="dialog-wide dialog-compare">
      {failed && (
        <p className="form-error" role="alert">
          Could not load the versions to compare.
        </p>
      )}
      {!data && !failed && <p className="muted">Loading versions…</p>}
      {data && versions.length === 0 && <p className="muted">Nothing to compare with yet: this item has no source render or earlier version.</p>}
      {data && other && (
        <>
          <div className="compare-controls">
            <label className="compare-choice">
              Compare with{' '}
              <select value={other.id} onChange={(e) => setOtherId(e.target.value)}>
                {versions.map((v) => (
                  <option key={v.id} value={v.id}>
                    {versionLabel(v)}: {v.name}
                  </option>
                ))}
              </select>
            </label>
            {!video && (
              <div className="compare-modes" role="group" aria-label="How to compare">
                <button type="button" className="button button-ghost button-small" aria-pressed={mode === 'side'} onClick={() => setMode('side')}>
                  Side by side
                </button>
                <button type="button" className="button button-ghost button-small" aria-pressed={mode === 'slider'} onClick={() => setMode('slider')}>
                  Slider
                </button>
              </div>
            )}
            {!video && (
              <div className="compare-zoom" role="group" aria-label="Zoom">
                <button type="button" className="button button-ghost button-small" onClick={() => setView((v) => zoomBy(v, 1 / 1.5))} disabled={view.zoom <= 1} aria-label="Zoom out">
                  −
                </button>
                <output aria-live="polite" aria-label="Zoom level">
                  {Math.round(view.zoom * 100)}%
                </output>
                <button type="button" className="button button-ghost button-small" onClick={() => setView((v) => zoomBy(v, 1.5))} aria-label="Zoom in">
                  +
                </button>
                <button type="button" className="button button-ghost button-small" onClick={() => setView(IDENTITY)} disabled={view === IDENTITY}>
                  Reset
                </button>
              </div>
            )}
          </div>
          {video ? (
            <VideoPair before={other} beforeLabel={label} after={data.item} />
          ) : mode === 'side' ? (
            <div className="compare-side">
              <figure>
                <Pane media={other} view={view} onView={setView} label={`${label}: ${other.name}`} />
                <figcaption>
                  {label}: {other.name}
                </figcaption>
              </figure>
              <figure>
                <Pane media={data.item} view={view} onView={setView} label={`This item: ${data.item.name}`} />
                <figcaption>This item: {data.item.name}</figcaption>
              </figure>
            </div>
          ) : (
            <div className="compare-slider">
              <div className="compare-slider-frame">
                <Pane media={other} view={view} onView={setView} label={`${label} (left of the line) and this item (right of it)`} />
                <div className="compare-slider-top" style={{ clipPath: `inset(0 0 0 ${split}%)` }} aria-hidden="true">
                  <Pane media={data.item} view={view} onView={setView} label="" decorative />
                </div>
                <span className="compare-slider-line" style={{ left: `${split}%` }} aria-hidden="true" />
              </div>
              <label className="compare-slider-range">
                <span>
                  {label} ← → This item
                </span>
                <input type="range" min={0} max={100} value={split} onChange={(e) => setSplit(Number(e.target.value))} aria-valuetext={`${split}% ${label}, ${100 - split}% this item`} />
              </label>
            </div>
          )}
        </>
      )}
    </Dialog>
  );
}

function Pane({ media, view, onView, label, decorative = false }: { media: CompareMedia; view: ViewTransform; onView: (update: (v: ViewTransform) => ViewTransform) => void; label: string; decorative?: boolean }): ReactElement {
  const frame = useRef<HTMLDivElement>(null);
  const last = useRef<{ x: number; y: number } | null>(null);
  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    event.currentTarget.setPointerCapture(event.pointerId);
    last.current = { x: event.clientX, y: event.clientY };
  };
  const onPointerMove = (event: PointerEvent<HTMLDivElement>) => {
    const from = last.current;
    const box = frame.current?.getBoundingClientRect();
    if (!from || !box || box.width === 0) return;
    last.current = { x: event.clientX, y: event.clientY };
    onView((v) => panBy(v, (event.clientX - from.x) / box.width, (event.clientY - from.y) / box.height));
  };
  const onWheel = (event: WheelEvent<HTMLDivElement>) => {
    if (event.deltaY === 0) return;
    onView((v) => zoomBy(v, event.deltaY < 0 ? 1.2 : 1 / 1.2));
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const moves: Record<string, [number, number]> = { ArrowLeft: [PAN_STEP, 0], ArrowRight: [-PAN_STEP, 0], ArrowUp: [0, PAN_STEP], ArrowDown: [0, -PAN_STEP] };
    if (moves[event.key]) {
      event.preventDefault();
      onView((v) => panBy(v, moves[event.key][0], moves[event.key][1]));
    } else if (event.key === '+' || event.key === '=') {
      event.preventDefault();
      onView((v) => zoomBy(v, 1.5));
    } else if (event.key === '-') {
      event.preventDefault();
      onView((v) => zoomBy(v, 1 / 1.5));
    } else if (event.key === '0') {
      event.preventDefault();
      onView(() => IDENTITY);
    }
  };
  return (
    <div
      ref={frame}
      className="compare-pane"
      tabIndex={decorative ? -1 : 0}
      role={decorative ? undefined : 'img'}
      aria-label={decorative ? undefined : `${label}. Drag or use the arrow keys to pan, + and - to zoom, 0 to reset.`}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={() => (last.current = null)}
      onPointerCancel={() => (last.current = null)}
      onWheel={onWheel}
      onKeyDown={onKeyDown}
    >
      {media.url ? <img src={media.url} alt="" draggable={false} style={{ transform: transformCss(view) }} /> : <span className="muted">No picture</span>}
    </div>
  );
}

/** Two players kept in step: one play button and one position for both. */
function VideoPair({ before, beforeLabel, after }: { before: CompareMedia; beforeLabel: string; after: CompareMedia }): ReactElement {
  const left = useRef<HTMLVideoElement>(null);
  const right = useRef<HTMLVideoElement>(null);
  const [playing, setPlaying] = useState(false);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState(0);
  const both = () => [left.current, right.current].filter((v): v is HTMLVideoElement => v !== null);

  const toggle = () => {
    if (playing) {
      for (const v of both()) v.pause();
      setPlaying(false);
      return;
    }
    for (const v of both()) {
      v.currentTime = Math.min(time, Number.isFinite(v.duration) ? v.duration : time);
      void v.play().catch(() => undefined);
    }
    setPlaying(true);
  };
  const seek = (to: number) => {
    setTime(to);
    for (const v of both()) v.currentTime = Math.min(to, Number.isFinite(v.duration) ? v.duration : to);
  };
  const player = (media: CompareMedia, ref: RefObject<HTMLVideoElement | null>, caption: string, lead: boolean) => (
    <figure>
      {media.media === 'video' && media.url ? (
        <video
          ref={ref}
          src={media.url}
          muted
          playsInline
          preload="metadata"
          aria-label={caption}
          onLoadedMetadata={(e) => setDuration((d) => Math.max(d, e.currentTarget.duration || 0))}
          onTimeUpdate={lead ? (e) => setTime(e.currentTarget.currentTime) : undefined}
          onEnded={lead ? () => setPlaying(false) : undefined}
        />
      ) : media.url ? (
        <img src={media.url} alt={caption} />
      ) : (
        <span className="muted">No picture</span>
      )}
      <figcaption>{caption}</figcaption>
    </figure>
  );
  return (
    <div className="compare-videos">
      <div className="compare-side">
        {player(before, left, `${beforeLabel}: ${before.name}`, false)}
        {player(after, right, `This item: ${after.name}`, true)}
      </div>
      <div className="compare-video-controls">
        <button type="button" className="button button-primary button-small" onClick={toggle}>
          {playing ? 'Pause both' : 'Play both'}
        </button>
        <label className="compare-scrub">
          <span className="visually-hidden">Position in both videos</span>
          <input type="range" min={0} max={Math.max(duration, 0.1)} step={0.05} value={Math.min(time, Math.max(duration, 0.1))} onChange={(e) => seek(Number(e.target.value))} aria-valuetext={`${time.toFixed(1)} seconds`} />
        </label>
        <span className="muted">
          {time.toFixed(1)} / {duration.toFixed(1)} s
        </span>
      </div>
    </div>
  );
}
