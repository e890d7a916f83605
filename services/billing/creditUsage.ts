/**
 * Credits added and spent per week, from the ledger: what the Billing tab's chart draws. Weeks start on Monday (UTC);
 * spending is split by the content kind the consume rows record; refunds and admin corrections (both ways) have their
 * own counts; other negative rows count as removed.
 */
import type { Knex } from 'knex';
import type { WeeklyCreditUsage } from '../../domain/billing';
import type { ContentType } from '../../domain/constants';
import { InvalidCreditAmountError, ProfileNotFoundError } from './credits';

export const USAGE_WEEKS_DEFAULT = 8;
export const USAGE_WEEKS_MAX = 52;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY_MS = 86_400_000;

/** Monday 00:00 UTC of the week `date` falls in. */
export function weekStartUtc(date: Date): Date {
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0 ... Sunday 6
  return new Date(day - weekday * DAY_MS);
}

interface UsageRow {
  week: Date;
  kind: string;
  credits: string | number;
}

/** The last `weeks` weeks up to the one holding `now`, oldest first, empty weeks included. */
export async function weeklyCreditUsage(db: Knex, workspaceId: string, weeks = USAGE_WEEKS_DEFAULT, now: Date = new Date()): Promise<WeeklyCreditUsage[]> {
  if (!Number.isSafeInteger(weeks) || weeks < 1 || weeks > USAGE_WEEKS_MAX) {
    throw new InvalidCreditAmountError(`weeks must be a whole number from 1 to ${USAGE_WEEKS_MAX}`);
  }
  if (!UUID_RE.test(workspaceId)) throw new ProfileNotFoundError();
  const first = new Date(weekStartUtc(now).getTime() - (weeks - 1) * 7 * DAY_MS);
  const rows: UsageRow[] = await db('credit_transactions')
    .where({ workspace_id: workspaceId })
    .andWhere('created_at', '>=', first)
    .select(
      db.raw("date_trunc('week', created_at at time zone 'UTC') at time zone 'UTC' as week"),
      db.raw(
        `case
           when transaction_type = 'admin_adjust' then case when amount > 0 then 'adjusted_added' else 'adjusted_removed' end
           when transaction_type = 'refund' or (amount < 0 and metadata->>'reason' = 'stripe_refund') then 'refunded'
           when amount > 0 then 'added'
           when transaction_type = 'consume' then coalesce(metadata->>'contentType', 'removed')
           else 'removed'
         end as kind`,
      ),
      db.raw('sum(abs(amount)) as credits'),
    )
    .groupByRaw('1, 2');

  const byWeek = new Map<number, WeeklyCreditUsage>();
  for (let i = 0; i < weeks; i += 1) {
    const start = new Date(first.getTime() + i * 7 * DAY_MS);
    byWeek.set(start.getTime(), {
      weekStart: start.toISOString().slice(0, 10),
      added: 0,
      spent: { image: 0, clip: 0, assembly: 0 },
      refunded: 0,
      adjusted: { added: 0, removed: 0 },
      removed: 0,
    });
  }
  for (const row of rows) {
    const week = byWeek.get(new Date(row.week).getTime());
    if (!week) continue;
    const credits = Number(row.credits);
    if (row.kind === 'added') week.added += credits;
    else if (row.kind === 'refunded') week.refunded += credits;
    else if (row.kind === 'adjusted_added') week.adjusted.added += credits;
    else if (row.kind === 'adjusted_removed') week.adjusted.removed += credits;
    else if (row.kind === 'image' || row.kind === 'clip' || row.kind === 'assembly') week.spent[row.kind as ContentType] += credits;
    else week.removed += credits;
  }
  return [...byWeek.values()];
}
