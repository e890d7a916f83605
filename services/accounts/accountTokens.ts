/**
 * One-time links of an account (db/migrations/20261210000100_account_tokens.ts): 32 random bytes handed out once in
 * the link, only their sha256 kept; good until their expiry and once. Issuing a link of a purpose retires the user's
 * earlier unused ones of that purpose, so only the latest e-mail works.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

export type AccountTokenPurpose = 'reset' | 'verify' | 'email_change';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function accountTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A fresh token and its hash (also for the no-account branch of a reset, which does the same work). */
export function newAccountToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: accountTokenHash(token) };
}

export async function issueAccountToken(
  db: Db,
  input: { userId: string; purpose: AccountTokenPurpose; ttlMs: number; newEmail?: string; issued?: { token: string; hash: string } },
): Promise<string> {
  const { token, hash } = input.issued ?? newAccountToken();
  await db('account_tokens').where({ user_id: input.userId, purpose: input.purpose }).whereNull('used_at').update({ used_at: db.fn.now() });
  await db('account_tokens').insert({
    user_id: input.userId,
    purpose: input.purpose,
    token_hash: hash,
    new_email: input.newEmail ?? null,
    expires_at: new Date(Date.now() + input.ttlMs),
  });
  return token;
}

export interface UsedAccountToken {
  userId: string;
  newEmail: string | null;
}

/** Marks the token used and answers whose it was, or null when it is unknown, expired, used or of another purpose. */
export async function useAccountToken(db: Db, purpose: AccountTokenPurpose, token: string): Promise<UsedAccountToken | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  // one statement: two requests with the same link cannot both use it
  const rows = (await db('account_tokens')
    .where({ token_hash: accountTokenHash(token), purpose })
    .whereNull('used_at')
    .andWhere('expires_at', '>', db.fn.now())
    .update({ used_at: db.fn.now() })
    .returning(['user_id', 'new_email'])) as Array<{ user_id: string; new_email: string | null }>;
  return rows[0] ? { userId: rows[0].user_id, newEmail: rows[0].new_email } : null;
}

/** Whether the user has an unused, unexpired link of the purpose (a sign-in does not send a second verification). */
export async function hasLiveAccountToken(db: Db, userId: string, purpose: AccountTokenPurpose): Promise<boolean> {
  const row = await db('account_tokens').where({ user_id: userId, purpose }).whereNull('used_at').andWhere('expires_at', '>', db.fn.now()).first('id');
  return row !== undefined;
}
