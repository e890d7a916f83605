import type { ReactElement } from 'react';
import './ProgressBar.css';

/**
 * The one progress bar of the app (uploads, clips, assemblies, data exports, the Activity list): a track with a
 * filled part, announced as a progressbar with its label and value. `thin` for bars inside compact lists and cards;
 * `done` colours a finished bar as a success.
 */
export function ProgressBar({
  label,
  percent,
  thin = false,
  done = false,
  className,
}: {
  label: string;
  percent: number;
  thin?: boolean;
  done?: boolean;
  className?: string;
}): ReactElement {
  const value = Math.max(0, Math.min(100, Math.round(percent)));
  const classes = ['progress-bar', thin && 'progress-bar-thin', done && 'progress-bar-done', className].filter(Boolean).join(' ');
  return (
    <div className={classes} role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={value}>
      <span style={{ width: `${value}%` }} />
    </div>
  );
}
