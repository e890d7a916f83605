import type { CSSProperties, ReactElement } from 'react';
import { secondsText, transitionText, type TimelineView } from './timelineView';

/** The edit the assembly will run, drawn as tracks of clips on a time ruler, with the output size and length. */
export function DryRunTimeline({ view }: { view: TimelineView }): ReactElement {
  const total = Math.max(view.totalDuration, 0.001);
  const ticks = Array.from({ length: Math.floor(total) + 1 }, (_, s) => s).filter((s) => s % (total > 20 ? 5 : total > 8 ? 2 : 1) === 0);
  return (
    <div className="timeline" aria-label="Timeline">
      <dl className="timeline-facts">
        <div>
          <dt>Output</dt>
          <dd>{view.width && view.height ? `${view.width} × ${view.height}` : '—'}</dd>
        </div>
        <div>
          <dt>Total duration</dt>
          <dd>{secondsText(view.totalDuration)}</dd>
        </div>
        <div>
          <dt>Clips</dt>
          <dd>{view.tracks.find((t) => t.label === 'Video')?.clips.length ?? 0}</dd>
        </div>
      </dl>
      <div className="timeline-ruler" aria-hidden="true">
        {ticks.map((s) => (
          <span key={s} style={{ left: `${(s / total) * 100}%` }}>
            {s}s
          </span>
        ))}
      </div>
      {view.tracks.map((track) => (
        <div key={track.key} className="timeline-track">
          <p className="timeline-track-label">{track.label}</p>
          <ol className="timeline-lane" aria-label={`${track.label} track`}>
            {track.clips.map((clip) => {
              const style: CSSProperties = { left: `${(clip.start / total) * 100}%`, width: `${(clip.length / total) * 100}%` };
              const transitions = [clip.transitionIn ? `in: ${transitionText(clip.transitionIn)}` : null, clip.transitionOut ? `out: ${transitionText(clip.transitionOut)}` : null].filter(Boolean).join(', ');
              const description = `${clip.label}, starts at ${secondsText(clip.start)}, length ${secondsText(clip.length)}${transitions ? `, transition ${transitions}` : ''}`;
              return (
                <li key={clip.key} className={`timeline-clip timeline-clip-${clip.kind}${clip.part ? ` timeline-${clip.part.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : ''}`} style={style} title={description} aria-label={description}>
                  {clip.transitionIn && <span className="timeline-transition timeline-transition-in" aria-hidden="true" />}
                  <span className="timeline-clip-label" aria-hidden="true">
                    {clip.label}
                  </span>
                  {clip.transitionOut && <span className="timeline-transition timeline-transition-out" aria-hidden="true" />}
                </li>
              );
            })}
          </ol>
        </div>
      ))}
      <table className="timeline-table">
        <caption className="visually-hidden">Timeline clips</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Clip</th>
            <th scope="col">Start</th>
            <th scope="col">Length</th>
            <th scope="col">Transition in / out</th>
          </tr>
        </thead>
        <tbody>
          {(view.tracks.find((t) => t.label === 'Video')?.clips ?? []).map((clip, i) => (
            <tr key={clip.key}>
              <td>{i + 1}</td>
              <td className="timeline-table-name">{clip.label}</td>
              <td>{secondsText(clip.start)}</td>
              <td>{secondsText(clip.length)}</td>
              <td>
                {clip.transitionIn ? transitionText(clip.transitionIn) : '—'} / {clip.transitionOut ? transitionText(clip.transitionOut) : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
