import { useAtom, useAtomValue } from 'jotai';
import type { ReactElement } from 'react';
import { transactionsCursorsAtom, transactionsStateAtom } from '../../atoms/billing';
import { LoadingState } from '../../components/Spinner';

const DATE_TIME_FORMAT = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });

const TYPE_LABEL: Record<string, string> = {
  signup_bonus: 'Welcome credits',
  purchase: 'Purchase',
  add: 'Added',
  deduct: 'Deducted',
  consume: 'Approved item',
  admin_adjust: 'Admin correction',
  refund: 'Refund',
};

/** The credit ledger, 50 a page, newest first, with who made each change. */
export function CreditTransactions(): ReactElement {
  const state = useAtomValue(transactionsStateAtom);
  const [cursors, setCursors] = useAtom(transactionsCursorsAtom);
  const page = cursors.length;
  const pages = state?.ok ? Math.max(1, Math.ceil(state.data.total / state.data.pageSize)) : 1;
  const next = state?.ok ? state.data.nextCursor : null;
  return (
    <section className="panel billing-panel" aria-labelledby="transactions-heading">
      <h2 id="transactions-heading">Credit Transactions</h2>
      {state === undefined && <LoadingState label="Loading transactions..." />}
      {state && !state.ok && <p className="credits-error">Unable to load transactions</p>}
      {state?.ok && state.data.transactions.length === 0 && <p className="muted">No transactions yet.</p>}
      {state?.ok && state.data.transactions.length > 0 && (
        <>
          <table className="billing-table">
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Description</th>
                <th scope="col">Type</th>
                <th scope="col">Credits</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {state.data.transactions.map((t) => (
                <tr key={t.id}>
                  <td data-label="Date">{DATE_TIME_FORMAT.format(new Date(t.createdAt))}</td>
                  <td data-label="Description">{t.description || '—'}</td>
                  <td data-label="Type">{TYPE_LABEL[t.transactionType] ?? t.transactionType}</td>
                  <td data-label="Credits" className={t.amount > 0 ? 'amount-in' : t.amount < 0 ? 'amount-out' : undefined}>
                    {t.amount > 0 ? `+${t.amount}` : t.amount}
                  </td>
                  <td data-label="By">{t.createdByEmail}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {pages > 1 && (
            <nav className="pager" aria-label="Transaction pages">
              <button type="button" className="button button-secondary" disabled={page <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                Previous
              </button>
              <span>
                Page {page} of {pages}
              </span>
              <button type="button" className="button button-secondary" disabled={!next} onClick={() => next && setCursors([...cursors, next])}>
                Next
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}
