import type { ReactElement } from 'react';
import { CREDIT_PACKAGES } from '../../../../domain/constants';
import { ROLE_LABELS } from '../../../../domain/workspaceRoles';
import type { AdminPurchase, AdminTransaction, AdminUserDetail, AdminUserWorkspace } from '../../api/admin';
import { countText } from '../../components/countText';

const DATE_TIME_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

const TRANSACTION_LABEL: Record<string, string> = {
  signup_bonus: 'Starting credits',
  purchase: 'Purchase',
  add: 'Credits added',
  deduct: 'Credits deducted',
  consume: 'Charged on approval',
  admin_adjust: 'Admin adjustment',
  refund: 'Stripe refund',
};

const PURCHASE_STATUS_LABEL: Record<string, string> = {
  open: 'Not paid',
  completed: 'Paid',
  expired: 'Expired',
  failed: 'Payment failed',
  refunded: 'Refunded',
  partially_refunded: 'Partly refunded',
};

function formatMoney(cents: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
  } catch {
    // an unknown currency code: show the figure and the code as stored
    return `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;
  }
}

function signed(amount: number): string {
  return amount > 0 ? `+${amount}` : `${amount}`;
}

export function CreditFacts({ credits }: { credits: AdminUserDetail['credits'] }): ReactElement {
  return (
    <dl className="admin-facts" aria-label="Credits">
      <div>
        <dt>Balance</dt>
        <dd data-testid="admin-balance">{credits.credits}</dd>
      </div>
      <div>
        <dt>Reserved</dt>
        <dd data-testid="admin-reserved">{credits.reservedCredits}</dd>
      </div>
      <div>
        <dt>Available</dt>
        <dd data-testid="admin-available">{credits.availableCredits}</dd>
      </div>
      <div>
        <dt>Purchased</dt>
        <dd>{credits.totalCreditsPurchased}</dd>
      </div>
    </dl>
  );
}

export function PurchaseList({ purchases }: { purchases: AdminPurchase[] }): ReactElement {
  if (purchases.length === 0) return <p className="muted admin-small">No purchases yet.</p>;
  return (
    <ul className="admin-rows" aria-label="Purchases">
      {purchases.map((p) => (
        <li key={p.id} className="admin-row">
          <span className="admin-row-main">
            <strong>{CREDIT_PACKAGES.find((pkg) => pkg.id === p.packageId)?.name ?? p.packageId}</strong>
            <span className="muted"> · {countText(p.credits, 'credit')} · {formatMoney(p.amountCents, p.currency)}</span>
          </span>
          <span className={`pill admin-status admin-status-${p.status}`}>{PURCHASE_STATUS_LABEL[p.status] ?? p.status}</span>
          <time className="admin-row-date muted" dateTime={p.createdAt}>
            {DATE_TIME_FORMAT.format(new Date(p.completedAt ?? p.createdAt))}
          </time>
        </li>
      ))}
    </ul>
  );
}

export function TransactionList({ transactions, total }: { transactions: AdminTransaction[]; total: number }): ReactElement {
  if (transactions.length === 0) return <p className="muted admin-small">No transactions yet.</p>;
  return (
    <>
      <ul className="admin-rows" aria-label="Transactions">
        {transactions.map((t) => (
          <li key={t.id} className="admin-row">
            <span className="admin-row-main">
              <strong>{TRANSACTION_LABEL[t.transactionType] ?? t.transactionType}</strong>
              {t.description && <span className="admin-row-description"> · {t.description}</span>}
              <span className="admin-row-by muted">by {t.createdByEmail}</span>
            </span>
            <span className={`admin-amount ${t.amount < 0 ? 'admin-amount-down' : 'admin-amount-up'}`}>{signed(t.amount)}</span>
            <time className="admin-row-date muted" dateTime={t.createdAt}>
              {DATE_TIME_FORMAT.format(new Date(t.createdAt))}
            </time>
          </li>
        ))}
      </ul>
      {total > transactions.length && (
        <p className="muted admin-small">
          The newest {transactions.length} of {total} transactions.
        </p>
      )}
    </>
  );
}

/** The user's workspaces: name, their role, how many members and the workspace's own balance. */
export function WorkspaceList({ workspaces }: { workspaces: AdminUserWorkspace[] }): ReactElement {
  if (workspaces.length === 0) return <p className="muted admin-small">Not a member of any workspace.</p>;
  return (
    <ul className="admin-rows" aria-label="Workspaces">
      {workspaces.map((w) => (
        <li key={w.id} className="admin-row admin-workspace-row" data-testid="admin-workspace">
          <span className="admin-row-main">
            <strong className="admin-break">{w.name}</strong>
            {/* a personal workspace is named so unless its owner renamed it */}
            {w.personal && w.name.trim().toLowerCase() !== 'personal' && (
              <>
                {' '}
                <span className="pill admin-workspace-personal">Personal</span>
              </>
            )}
            <span className="admin-row-by muted">
              {ROLE_LABELS[w.role]} · {countText(w.memberCount, 'member')}
            </span>
          </span>
          <span className="admin-workspace-credits">
            <span className="admin-workspace-balance">{countText(w.credits, 'credit')}</span>
            {w.reservedCredits > 0 && <span className="muted admin-small"> ({w.availableCredits} available)</span>}
          </span>
        </li>
      ))}
    </ul>
  );
}
