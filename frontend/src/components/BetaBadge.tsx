import type { ReactElement } from 'react';

/** The 'Beta' mark of Enhance Renders (001 section 1), in the sidebar and the view's title. */
export function BetaBadge(): ReactElement {
  return <span className="beta-badge">Beta</span>;
}
