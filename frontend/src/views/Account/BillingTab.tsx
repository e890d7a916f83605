import { useAtomValue, useSetAtom } from 'jotai';
import { lazy, Suspense, useState, type ReactElement } from 'react';
import type { User } from '../../api/auth';
import { createCheckoutSession } from '../../api/billing';
import { apiErrorMessage } from '../../api/client';
import { creditSummaryStateAtom } from '../../atoms/credits';
import { currentUserAtom } from '../../atoms/session';
import { showToastAtom } from '../../atoms/toast';
import { CreditPackageCard } from '../../components/CreditPackageCard';
import { CREDIT_PACKAGES, type CreditPackage } from '../../components/creditPackages';
import { LoadingState } from '../../components/Spinner';
import { BILLING_MSG, LOW_CREDIT_THRESHOLD } from '../../../../domain/billing';
import { checkoutReturnUrl } from './checkoutReturn';
import { CreditTransactions } from './CreditTransactions';
import { PurchaseHistory } from './PurchaseHistory';
import { PurchaseReturnNotice } from './PurchaseReturnNotice';
import { pluralWord } from '../../components/countText';
import './billing.css';

// chart.js is large: it loads with the Billing tab, never with the landing page
const CreditUsageChart = lazy(() => import('./CreditUsageChart'));

function CreditBalance(): ReactElement {
  const summary = useAtomValue(creditSummaryStateAtom);
  if (summary === undefined) return <LoadingState label="Loading credits..." />;
  if (!summary.ok || !summary.data) {
    return (
      <div className="panel" role="alert">
        <h2>Credit Balance</h2>
        <p className="credits-error">Unable to load credits</p>
      </div>
    );
  }
  const { availableCredits, reservedCredits, credits } = summary.data;
  return (
    <div className="panel balance-panel" aria-labelledby="balance-heading">
      <h2 id="balance-heading">Credit Balance</h2>
      <p className="balance-amount">
        <strong>{availableCredits}</strong> {pluralWord(availableCredits, 'credit')} available
      </p>
      {reservedCredits > 0 && (
        <p className="muted">
          {credits} in total, {reservedCredits} reserved for items waiting for approval.
        </p>
      )}
      {credits < LOW_CREDIT_THRESHOLD && (
        <p className="hint-banner">Running low on credits? A package below keeps your projects moving.</p>
      )}
    </div>
  );
}

function CreditsExplainer(): ReactElement {
  return (
    <div className="panel" aria-labelledby="credits-how-heading">
      <h2 id="credits-how-heading">How Do Credits Work?</h2>
      <ul className="explainer">
        <li>
          <strong>1 credit</strong> per AI image
        </li>
        <li>
          <strong>4 credits</strong> per 5-second video clip
        </li>
        <li>
          <strong>Free</strong> video assemblies
        </li>
      </ul>
      <p className="muted">
        Previews are free. When you start a generation its credits are set aside, and they are only charged when you
        approve the result in Approvals. Rejected or expired items give the credits back.
      </p>
    </div>
  );
}

function PackagePurchase({ user }: { user: User }): ReactElement {
  const showToast = useSetAtom(showToastAtom);
  const [pendingId, setPendingId] = useState<string | null>(null);

  async function buy(pkg: CreditPackage) {
    setPendingId(pkg.id);
    try {
      const url = await createCheckoutSession({
        packageId: pkg.id,
        credits: pkg.totalCredits,
        userId: user.id,
        email: user.email,
        successUrl: checkoutReturnUrl(window.location.href, 'success'),
        cancelUrl: checkoutReturnUrl(window.location.href, 'cancelled'),
      });
      window.location.assign(url);
    } catch (error) {
      showToast({ kind: 'error', message: apiErrorMessage(error, BILLING_MSG.checkoutFailed) });
      setPendingId(null);
    }
  }

  return (
    <div className="package-grid">
      {CREDIT_PACKAGES.map((pkg) => (
        <CreditPackageCard
          key={pkg.id}
          pkg={pkg}
          action={
            <button
              type="button"
              className={`button button-block ${pkg.isPopular ? 'button-primary' : 'button-secondary'}`}
              disabled={pendingId !== null}
              aria-label={pendingId === pkg.id ? undefined : `Buy credits: ${pkg.name}`}
              onClick={() => void buy(pkg)}
            >
              {pendingId === pkg.id ? 'Opening checkout...' : 'Buy credits'}
            </button>
          }
        />
      ))}
    </div>
  );
}

export function BillingTab(): ReactElement {
  const user = useAtomValue(currentUserAtom);
  return (
    <div className="stack billing">
      <PurchaseReturnNotice />
      <div className="two-columns">
        <CreditBalance />
        <CreditsExplainer />
      </div>
      <section aria-labelledby="packages-heading">
        <h2 id="packages-heading" className="section-title">
          Credit packages
        </h2>
        {user && <PackagePurchase user={user} />}
      </section>
      <Suspense fallback={<LoadingState label="Loading usage..." />}>
        <CreditUsageChart />
      </Suspense>
      <PurchaseHistory />
      <CreditTransactions />
    </div>
  );
}
