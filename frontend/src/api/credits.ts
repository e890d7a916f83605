import type { ContentType } from '../../../domain/constants';
import type { CanCreateContentResult, CreditSummary } from '../../../domain/creditMath';
import { api } from './client';

export type { CreditSummary };

/** GET /api/credits/can-create?type=...: the server's start rule for one more item (reason, limit, pending count and cost). */
export async function fetchCanCreate(type: ContentType): Promise<CanCreateContentResult> {
  const body = await api.get('credits/can-create', { searchParams: { type } }).json<{ success: true; data: CanCreateContentResult }>();
  return body.data;
}

export async function fetchCreditSummary(): Promise<CreditSummary> {
  const body = await api.get('credits/summary').json<{ success: true; data: CreditSummary }>();
  return body.data;
}
