import { useAtomValue } from 'jotai';
import type { ReactElement } from 'react';
import type { PurchaseView } from '../../api/billing';
import { purchasesStateAtom } from '../../atoms/billing';
import { formatCents } from '../../components/creditPackages';
import { LoadingState } from '../../components/Spinner';

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });

const STATUS_LABEL: Record<PurchaseView['status'], string> = {
  open: 'Pending',
  completed: 'Paid',
  failed: 'Failed',
  expired: 'Expired',
  refunded: 'Refunded',
  partially_refunded: 'Partially refunded',
};

/** Date, package, credits, amount and status of each credit purchase. */
export function PurchaseHistory(): ReactElement {
  const state = useAtomValue(purchasesStateAtom);
  return (
    <section className="panel billing-panel" aria-labelledby="purchase-history-heading">
      <h2 id="purchase-history-heading">Purchase History</h2>
      {state === undefined && <LoadingState label="Loading purchases..." />}
      {state && !state.ok && <p className="credits-error">Unable to load purchases</p>}
      {state?.ok && state.data.length === 0 && <p className="muted">No purchases yet.</p>}
      {state?.ok && state.data.length > 0 && (
        <table className="billing-table">
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Package</th>
              <th scope="col">Credits</th>
              <th scope="col">Amount</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {state.data.map((p) => (
              <tr key={p.id}>
                <td data-label="Date">{DATE_FORMAT.format(new Date(p.createdAt))}</td>
                <td data-label="Package">{p.packageName}</td>
                <td data-label="Credits">{p.credits}</td>
                <td data-label="Amount">
                  ${formatCents(p.amountCents)} {p.currency.toUpperCase()}
                </td>
                <td data-label="Status">
                  <span className={`status-pill status-${p.status}`}>{STATUS_LABEL[p.status]}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
