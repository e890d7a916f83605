import type { ReactElement, ReactNode } from 'react';
import { approxClips, displayPriceNzd, type CreditPackage } from './creditPackages';

/** One credit package, as on the landing page's pricing and in Billing; `action` is the button under it. */
export function CreditPackageCard({ pkg, action }: { pkg: CreditPackage; action?: ReactNode }): ReactElement {
  const headingId = `package-${pkg.id}`;
  return (
    <article className={`package-card${pkg.isPopular ? ' package-card-popular' : ''}`} aria-labelledby={headingId}>
      {pkg.isPopular && <span className="package-badge">Most Popular</span>}
      <h3 id={headingId}>{pkg.name}</h3>
      <p className="package-price">
        <span className="package-currency">$</span>
        {displayPriceNzd(pkg.priceCents)}
        <span className="package-unit">NZD</span>
      </p>
      <ul className="package-facts">
        <li>
          <strong>{pkg.totalCredits}</strong> credits
        </li>
        <li>≈ {approxClips(pkg.totalCredits)} video clips</li>
        <li>or {pkg.totalCredits} AI images</li>
        <li>Video assemblies free</li>
      </ul>
      {action}
    </article>
  );
}
