import type { ReactElement } from 'react';
import '../../components/PendingCostNotice.css';

/** The beta notice (001 section 1): draft storage is not guaranteed, so download what you want to keep. */
export function BetaNotice(): ReactElement {
  return (
    <p className="notice notice-amber enhance-beta-notice">
      <strong>Beta:</strong> storage of draft images is not guaranteed. Download the images you want to keep, or move the draft to projects.
    </p>
  );
}
