import type { PurchaseStatusReply, PurchaseView, PurchasingMode, PurchasingReply, WeeklyCreditUsage } from '../../../domain/billing';
import { api } from './client';

export type { PurchaseStatusReply, PurchaseView, PurchasingMode, WeeklyCreditUsage };

/** How credits are bought on this installation: live, test (no real payment) or unavailable. */
export async function fetchPurchasing(): Promise<PurchasingMode> {
  const body = await api.get('stripe/purchasing').json<{ success: true; data: PurchasingReply }>();
  return body.data.mode;
}

/** The spec's payload (001 section 7); the server decides credits and amount from packageId alone. */
export interface CheckoutSessionInput {
  packageId: string;
  priceId?: string;
  credits: number;
  userId: string;
  email: string;
  successUrl: string;
  cancelUrl: string;
}

/** Starts a Stripe Checkout session for a credit package; the browser then goes to the returned url. */
export async function createCheckoutSession(input: CheckoutSessionInput): Promise<string> {
  const body = await api.post('stripe/create-checkout-session', { json: input }).json<{ success?: boolean; url?: string }>();
  if (!body.url) throw new Error('No checkout url in the reply');
  return body.url;
}

/** The purchase of a Checkout Session (after the return from Stripe) with the balance now. */
export async function fetchPurchaseStatus(sessionId: string): Promise<PurchaseStatusReply> {
  const body = await api.get(`stripe/purchases/${encodeURIComponent(sessionId)}`).json<{ success: true; data: PurchaseStatusReply }>();
  return body.data;
}

export async function fetchPurchases(): Promise<PurchaseView[]> {
  const body = await api.get('stripe/purchases').json<{ success: true; data: PurchaseView[] }>();
  return body.data;
}

export async function fetchWeeklyUsage(weeks = 8): Promise<WeeklyCreditUsage[]> {
  const body = await api.get('credits/weekly-usage', { searchParams: { weeks } }).json<{ success: true; data: WeeklyCreditUsage[] }>();
  return body.data;
}

export interface CreditTransaction {
  id: string;
  amount: number;
  transactionType: string;
  description: string;
  createdAt: string;
  createdByEmail: string;
}

export interface TransactionPage {
  transactions: CreditTransaction[];
  page: number;
  pageSize: number;
  total: number;
  /** What asks for the page after this one; null on the last page. */
  nextCursor: string | null;
}

/** The credit ledger, 50 a page, newest first: the first page (no cursor) or the one a page's `nextCursor` names. */
export async function fetchTransactions(cursor: string | null): Promise<TransactionPage> {
  const body = await api
    .get('credits/transactions', { searchParams: cursor ? { cursor } : {} })
    .json<{ success: true; data: CreditTransaction[]; page: number; pageSize: number; total: number; nextCursor: string | null }>();
  return { transactions: body.data, page: body.page, pageSize: body.pageSize, total: body.total, nextCursor: body.nextCursor };
}
