/**
 * The second step of a sign-in (DESIGN.md "Accounts"): a right password of an account with two-factor sign-in makes
 * a pending sign-in, not a session. Its token (32 random bytes, only the sha256 kept) is good 5 minutes, once, and for
 * at most 5 wrong codes; then the password is asked again.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors';
import { PENDING_SIGN_IN_MAX_FAILURES, PENDING_SIGN_IN_TTL_MS, TWO_FACTOR_CODES, TWO_FACTOR_MSG, type SecondFactorMethod } from '../../domain/twoFactor';

type Db = Knex | Knex.Transaction;

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** What the second step may use: the app (and its recovery codes), passkeys, or both. */
export async function secondFactorMethods(db: Db, userId: string): Promise<SecondFactorMethod[]> {
  const [totp, passkey] = await Promise.all([
    db('totp_factors').where({ user_id: userId }).whereNotNull('confirmed_at').first('user_id'),
    db('passkeys').where({ user_id: userId }).first('id'),
  ]);
  const methods: SecondFactorMethod[] = [];
  if (totp) methods.push('totp');
  if (passkey) methods.push('passkey');
  if (methods.length > 0) methods.push('recovery');
  return methods;
}

/** Whether the account has two-factor sign-in: a confirmed authenticator app or a passkey. */
export async function hasSecondFactor(db: Db, userId: string): Promise<boolean> {
  const row = (await db
    .select(
      db.raw('exists (select 1 from totp_factors where user_id = ? and confirmed_at is not null) or exists (select 1 from passkeys where user_id = ?) as on', [userId, userId]),
    )
    .first()) as { on: boolean } | undefined;
  return row?.on === true;
}

export interface IssuedPendingSignIn {
  /** handed to the browser once; only its sha256 is kept */
  token: string;
  expiresAt: Date;
  methods: SecondFactorMethod[];
}

function idOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export async function startPendingSignIn(db: Db, userId: string, device: { userAgent?: string | null; ipAddress?: string | null }): Promise<IssuedPendingSignIn> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + PENDING_SIGN_IN_TTL_MS);
  await db('pending_sign_ins').where({ user_id: userId }).andWhere('expires_at', '<', db.fn.now()).delete();
  await db('pending_sign_ins').insert({
    id: idOf(token),
    user_id: userId,
    user_agent: device.userAgent?.slice(0, 512) || null,
    ip_address: device.ipAddress || null,
    expires_at: expiresAt,
  });
  return { token, expiresAt, methods: await secondFactorMethods(db, userId) };
}

export class PendingSignInInvalidError extends DomainError {
  constructor() {
    super(401, TWO_FACTOR_CODES.pendingInvalid, TWO_FACTOR_MSG.pendingInvalid);
  }
}

export interface PendingSignIn {
  id: string;
  userId: string;
  userAgent: string | null;
  ipAddress: string | null;
}

/** The live pending sign-in of `token`: unused, unexpired, under its wrong codes; else 401 SIGN_IN_EXPIRED. */
export async function findPendingSignIn(db: Db, token: string): Promise<PendingSignIn> {
  if (!TOKEN_PATTERN.test(token)) throw new PendingSignInInvalidError();
  const row = (await db('pending_sign_ins')
    .where({ id: idOf(token) })
    .whereNull('used_at')
    .andWhere('expires_at', '>', db.fn.now())
    .andWhere('failures', '<', PENDING_SIGN_IN_MAX_FAILURES)
    .first('id', 'user_id', 'user_agent', 'ip_address')) as { id: string; user_id: string; user_agent: string | null; ip_address: string | null } | undefined;
  if (!row) throw new PendingSignInInvalidError();
  return { id: row.id, userId: row.user_id, userAgent: row.user_agent, ipAddress: row.ip_address };
}

/** The user a pending token names, or null (for the rate limit's key, before the code is looked at). */
export async function pendingSignInUser(db: Db, token: string): Promise<string | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const row = (await db('pending_sign_ins').where({ id: idOf(token) }).first('user_id')) as { user_id: string } | undefined;
  return row?.user_id ?? null;
}

/** A wrong code: one more failure (the fifth ends the pending sign-in). */
export async function recordPendingFailure(db: Db, id: string): Promise<void> {
  await db('pending_sign_ins').where({ id }).increment('failures', 1);
}

/** Uses the pending sign-in up: true for the one request that does (two requests cannot both). */
export async function usePendingSignIn(db: Db, id: string): Promise<boolean> {
  const used = await db('pending_sign_ins').where({ id }).whereNull('used_at').andWhere('expires_at', '>', db.fn.now()).update({ used_at: db.fn.now() });
  return used > 0;
}
