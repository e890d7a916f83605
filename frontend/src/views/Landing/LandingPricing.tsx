import type { ReactElement } from 'react';
import { CreditPackageCard } from '../../components/CreditPackageCard';
import { CREDIT_PACKAGES } from '../../components/creditPackages';

export function LandingPricing({ onChoose }: { onChoose: () => void }): ReactElement {
  return (
    <section id="pricing" className="section section-tinted" aria-labelledby="pricing-title">
      <div className="section-heading">
        <p className="eyebrow">Pricing</p>
        <h2 id="pricing-title">Pay for what you approve</h2>
        <p className="section-lede">
          1 credit per AI image, 4 credits per video clip, video assemblies free. Start with free credits, no card
          required.
        </p>
      </div>
      <div className="package-grid">
        {CREDIT_PACKAGES.map((pkg) => (
          <CreditPackageCard
            key={pkg.id}
            pkg={pkg}
            action={
              <button type="button" className={`button button-block ${pkg.isPopular ? 'button-primary' : 'button-secondary'}`} onClick={onChoose}>
                Get started
              </button>
            }
          />
        ))}
      </div>
    </section>
  );
}
