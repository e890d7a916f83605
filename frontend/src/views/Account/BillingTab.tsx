import { useAtomValue, useSetAtom } from 'jotai';
import { lazy, Suspense, useEffect, useState, type ReactElement } from 'react';
import type { User } from '../../api/auth';
import { createCheckoutSession } from '../../api/billing';
import { apiErrorMessage } from '../../api/client';
import { purchasingStateAtom } from '../../atoms/billing';
import { creditSummaryStateAtom } from '../../atoms/credits';
import { currentUserAtom } from '../../atoms/session';
import { showToastAtom } from '../../atoms/toast';
import { currentWorkspaceAtom, workspaceAllowsAtom } from '../../atoms/workspace';
import { fetchSpendByMember, type MemberSpend } from '../../api/workspaces';
import { CreditPackageCard } from '../../components/CreditPackageCard';
import { CREDIT_PACKAGES, type CreditPackage } from '../../components/creditPackages';
import { PURCHASES_UNAVAILABLE, TEST_MODE_EXPLAINER, TEST_MODE_LABEL } from '../../components/purchasingText';
import { LoadingState } from '../../components/Spinner';
import { BILLING_MSG, LOW_CREDIT_THRESHOLD, type PurchasingMode } from '../../../../domain/billing';
import { checkoutReturnUrl } from './checkoutReturn';
import { CreditTransactions } from './CreditTransactions';
import { PurchaseHistory } from './PurchaseHistory';
import { PurchaseReturnNotice } from './PurchaseReturnNotice';
import { AskForCredits } from './AskForCredits';
import { pluralWord } from '../../components/countText';
import './billing.css';

// chart.js is large: it loads with the Billing tab, never with the landing page
const CreditUsageChart = lazy(() => import('./CreditUsageChart'));

function CreditBalance({ canBuy, sharedBy }: { canBuy: boolean; sharedBy: string | null }): ReactElement {
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
      {sharedBy && <p className="muted">Shared by everyone in {sharedBy}.</p>}
      {canBuy && credits < LOW_CREDIT_THRESHOLD && (
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

const PURCHASING_NOTE_ID = 'purchasing-note';

/** Above the packages: test payments are labelled as such; where nothing can be bought, why, before any click. */
function PurchasingNote({ mode }: { mode: PurchasingMode | undefined }): ReactElement | null {
  if (mode === 'test') {
    return (
      <div className="test-mode-banner" role="note" id={PURCHASING_NOTE_ID}>
        <span className="test-mode-badge">{TEST_MODE_LABEL}</span>
        <span>{TEST_MODE_EXPLAINER}</span>
      </div>
    );
  }
  if (mode === 'unavailable') {
    return (
      <div className="notice-info purchasing-unavailable" role="note">
        <p id={PURCHASING_NOTE_ID}>{PURCHASES_UNAVAILABLE}</p>
      </div>
    );
  }
  return null;
}

function PackagePurchase({ user }: { user: User }): ReactElement {
  const showToast = useSetAtom(showToastAtom);
  const [pendingId, setPendingId] = useState<string | null>(null);
  const purchasing = useAtomValue(purchasingStateAtom);
  // not known yet, or the API could not say: the buttons stay usable (a refusal is shown if it comes)
  const mode = purchasing?.ok ? purchasing.data : undefined;
  const unavailable = mode === 'unavailable';

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
    <>
      <PurchasingNote mode={mode} />
      <div className="package-grid">
        {CREDIT_PACKAGES.map((pkg) => (
          <CreditPackageCard
            key={pkg.id}
            pkg={pkg}
            action={
              <button
                type="button"
                className={`button button-block ${pkg.isPopular ? 'button-primary' : 'button-secondary'}`}
                disabled={pendingId !== null || unavailable}
                aria-label={pendingId === pkg.id ? undefined : `Buy credits: ${pkg.name}`}
                aria-describedby={mode === 'test' || unavailable ? PURCHASING_NOTE_ID : undefined}
                onClick={() => void buy(pkg)}
              >
                {pendingId === pkg.id ? 'Opening checkout...' : 'Buy credits'}
              </button>
            }
          />
        ))}
      </div>
    </>
  );
}

type SpendState = { status: 'loading' } | { status: 'done'; members: MemberSpend[] } | { status: 'error'; message: string };

/** "Ada Lovelace" for a member, "Ada Lovelace (former member)" for someone who left, one line for deleted accounts. */
function SpenderName({ member }: { member: MemberSpend }): ReactElement {
  if (member.deleted) {
    return (
      <>
        Former member<span className="muted"> (deleted account)</span>
      </>
    );
  }
  return (
    <>
      {member.name.trim() || member.email}
      {!member.member && <span className="muted"> (former member)</span>}
    </>
  );
}

/**
 * Admins and owners of a shared workspace: the credits charged on approvals, per person, twice: for the items they
 * generated and for the items they approved. People who left (or whose account is gone) keep their row.
 */
function SpendByMember(): ReactElement {
  const credits = useAtomValue(creditSummaryStateAtom);
  const [state, setState] = useState<SpendState>({ status: 'loading' });
  // re-read when the balance moves (a charge or a purchase): the same live source as the balance above
  const balanceKey = credits?.ok && credits.data ? `${credits.data.credits}:${credits.data.reservedCredits}` : null;

  useEffect(() => {
    let current = true;
    fetchSpendByMember()
      .then((members) => current && setState({ status: 'done', members }))
      .catch((error: unknown) => current && setState({ status: 'error', message: apiErrorMessage(error, 'Unable to load spend per member') }));
    return () => {
      current = false;
    };
  }, [balanceKey]);

  return (
    <section className="panel" aria-labelledby="spend-heading">
      <h2 id="spend-heading">Spend per member</h2>
      {state.status === 'loading' && <LoadingState label="Loading spend per member..." />}
      {state.status === 'error' && (
        <p className="credits-error" role="alert">
          {state.message}
        </p>
      )}
      {state.status === 'done' && state.members.length === 0 && <p className="muted">No credits spent yet.</p>}
      {state.status === 'done' && state.members.length > 0 && (
        <>
          <p className="muted" id="spend-explainer">
            Credits are charged when an item is approved. Generated: credits for the items each person generated.
            Approved: credits for the items each person approved.
          </p>
          <table className="spend-table" aria-describedby="spend-explainer">
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col" className="spend-credits">
                  Generated
                </th>
                <th scope="col" className="spend-credits">
                  Approved
                </th>
              </tr>
            </thead>
            <tbody>
              {state.members.map((member, index) => (
                <tr key={member.userId ?? `deleted-${index}`}>
                  <th scope="row" className="spend-member">
                    <SpenderName member={member} />
                  </th>
                  <td className="spend-credits">{member.generated}</td>
                  <td className="spend-credits">{member.approved}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

export function BillingTab(): ReactElement {
  const user = useAtomValue(currentUserAtom);
  const workspace = useAtomValue(currentWorkspaceAtom);
  const allows = useAtomValue(workspaceAllowsAtom);
  // buying, purchases and spend per member are the workspace admins'; alone in the personal workspace that is you
  const canBuy = allows('billing');
  const shared = !!workspace && (!workspace.personal || (workspace.memberCount ?? 1) > 1);
  const workspaceName = workspace?.name ?? 'this workspace';
  return (
    <div className="stack billing">
      <PurchaseReturnNotice />
      <div className="two-columns">
        <CreditBalance canBuy={canBuy} sharedBy={shared ? workspaceName : null} />
        <CreditsExplainer />
      </div>
      {canBuy && shared && <SpendByMember />}
      <section aria-labelledby="packages-heading">
        <h2 id="packages-heading" className="section-title">
          Credit packages
        </h2>
        {user && canBuy && <PackagePurchase user={user} />}
        {workspace?.role && !canBuy && <AskForCredits workspaceId={workspace.id} workspaceName={workspaceName} />}
      </section>
      <Suspense fallback={<LoadingState label="Loading usage..." />}>
        <CreditUsageChart />
      </Suspense>
      {canBuy && <PurchaseHistory />}
      <CreditTransactions />
    </div>
  );
}
