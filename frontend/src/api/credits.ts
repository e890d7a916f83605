import { api } from './client';

export interface CreditSummary {
  credits: number;
  reservedCredits: number;
  availableCredits: number;
  totalCreditsPurchased: number;
  totalCreditsAdded?: number;
  totalClipsUsed?: number;
  totalImagesUsed?: number;
  totalAssembliesUsed?: number;
}

export async function fetchCreditSummary(): Promise<CreditSummary> {
  const body = await api.get('credits/summary').json<{ success: true; data: CreditSummary }>();
  return body.data;
}
