import { ADMIN_ADJUST_MAX } from '../../../../domain/admin';

/** The whole number of credits typed, or an error text. */
export function parseCreditAmount(raw: string): number | string {
  const text = raw.trim();
  if (!text) return 'Enter how many credits';
  if (!/^\d+$/.test(text)) return 'Credits are whole numbers';
  const n = Number(text);
  if (n < 1) return 'Enter at least 1 credit';
  if (n > ADMIN_ADJUST_MAX) return `At most ${ADMIN_ADJUST_MAX.toLocaleString('en')} credits at a time`;
  return n;
}
