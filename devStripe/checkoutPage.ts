/**
 * The local test-mode checkout page (GET /checkout/:id of devStripe/localStripe.ts): what is being bought, a banner
 * that no real payment happens, and the buttons that complete the session as Stripe's hosted page would. Plain HTML
 * and CSS, no script; readable at phone width.
 */
import type Stripe from 'stripe';

export const TEST_MODE_LABEL = 'Test mode: no real payment';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function money(session: Stripe.Checkout.Session): string {
  return `${(session.currency ?? '').toUpperCase()} ${((session.amount_total ?? 0) / 100).toFixed(2)}`;
}

/**
 * The page's icon: the app's mark in the test-mode banner's amber. Linked as a data: URL, so the browser asks this
 * server for no /favicon.ico (which would be a 404); the server still answers that path for its other responses.
 */
export const CHECKOUT_FAVICON_SVG =
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'><rect width='32' height='32' rx='8' fill='#b45309'/>" +
  "<path d='M9 22V10h7a4 4 0 0 1 0 8h-3m3 0 4 4' stroke='white' stroke-width='2.5' fill='none' stroke-linecap='round' stroke-linejoin='round'/></svg>";
const FAVICON_LINK = `<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,${encodeURIComponent(CHECKOUT_FAVICON_SVG)}">`;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2937;background:#f3f4f6}
main{max-width:28rem;margin:2rem auto;padding:0 1rem}
.banner{margin:0 0 1rem;padding:.75rem 1rem;border:1px solid #f59e0b;border-radius:.5rem;background:#fffbeb;color:#78350f}
.banner strong{display:block;font-size:1.05rem}
.card{padding:1.25rem;border:1px solid #e5e7eb;border-radius:.75rem;background:#fff}
h1{margin:0 0 .75rem;font-size:1.35rem}
.amount{margin:.25rem 0 1rem;font-size:1.6rem;font-weight:700}
.muted{color:#4b5563;font-size:.9rem}
form{margin:0 0 .75rem}
button{width:100%;min-height:2.75rem;padding:.6rem 1rem;border:0;border-radius:.5rem;font:inherit;font-weight:600;cursor:pointer}
.pay{background:#4338ca;color:#fff}
.pay:focus-visible,.debit:focus-visible,a:focus-visible{outline:3px solid #1e1b4b;outline-offset:2px}
.debit{background:#e0e7ff;color:#1e1b4b}
a{color:#3730a3}
`;

/** The page of an open session; a completed or expired one says so and links back to the app. */
export function checkoutPageHtml(session: Stripe.Checkout.Session, productName: string | null): string {
  const what = productName ?? session.metadata?.packageId ?? 'a credit package';
  const id = escapeHtml(session.id);
  const closed =
    session.status === 'open'
      ? ''
      : `<p>This checkout is ${session.status === 'complete' ? 'already paid' : 'expired'}.</p>
<p><a href="${escapeHtml((session.status === 'complete' ? session.success_url : session.cancel_url) ?? '/').replace('{CHECKOUT_SESSION_ID}', id)}">Return to the app</a></p>`;
  const actions = `<p class="muted">Paying completes this checkout as Stripe would: the app receives a signed
<code>checkout.session.completed</code> webhook and adds the credits. No card is charged and no money moves.</p>
<form method="post" action="/checkout/${id}"><button type="submit" class="pay">Pay</button></form>
<form method="post" action="/checkout/${id}?method=bank_debit"><button type="submit" class="debit">Pay by bank debit (clears later)</button></form>
<p><a href="/checkout/${id}/cancel">Cancel and return to the app</a></p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkout (${TEST_MODE_LABEL})</title>${FAVICON_LINK}<style>${STYLE}</style></head>
<body><main>
<div class="banner" role="note"><strong>${TEST_MODE_LABEL}</strong>This checkout runs beside the app in place of Stripe's, so the app can be tried without a Stripe account.</div>
<div class="card"><h1>Test-mode checkout</h1>
<p>Pay ${escapeHtml(money(session))} for ${escapeHtml(what)}</p>
<p class="amount" aria-hidden="true">${escapeHtml(money(session))}</p>
${session.customer_email ? `<p class="muted">Buyer: ${escapeHtml(session.customer_email)}</p>` : ''}
${closed || actions}
</div></main></body></html>`;
}
