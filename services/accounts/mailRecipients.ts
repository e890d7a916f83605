/**
 * Who may be sent e-mail: an account receives none but its own verification links until its address is verified
 * (DESIGN.md "Accounts"). Every sender of notifications, credit requests and webhook notices asks here first.
 */
import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

/** The addresses of `emails` that belong to a verified account (compared case-insensitively), in their order. */
export async function verifiedRecipients(db: Db, emails: readonly string[]): Promise<string[]> {
  if (emails.length === 0) return [];
  const lowered = emails.map((e) => e.toLowerCase());
  const rows = (await db('users').whereIn(db.raw('lower(email)') as unknown as string, lowered).whereNotNull('email_verified_at').select('email')) as Array<{ email: string }>;
  const ok = new Set(rows.map((r) => r.email.toLowerCase()));
  return emails.filter((e) => ok.has(e.toLowerCase()));
}

/** Whether the user's e-mail is verified. */
export async function isEmailVerified(db: Db, userId: string): Promise<boolean> {
  const row = (await db('users').where({ id: userId }).first('email_verified_at')) as { email_verified_at: Date | null } | undefined;
  return Boolean(row?.email_verified_at);
}
