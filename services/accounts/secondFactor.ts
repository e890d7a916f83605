/**
 * Two-factor sign-in as a whole (DESIGN.md "Accounts"): the second step of a sign-in, "Sign in with a passkey", the
 * state Account → Security shows, and the rule that turning it off, removing a factor or making new recovery codes
 * needs a second factor proved in the last minutes (`sessions.second_factor_at`, set by confirmForSession). The
 * factors themselves are ./totp.ts, ./passkeys.ts and ./recoveryCodes.ts; the pending sign-in is ./pendingSignIns.ts.
 */
import type { Knex } from 'knex';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { DomainError } from '../../domain/errors';
import { refuseWhereSsoRequired } from '../workspaces/workspaceSingleSignOn';
import { FRESH_SECOND_FACTOR_MS, TWO_FACTOR_CODES, TWO_FACTOR_MSG, type SecondFactorMethod } from '../../domain/twoFactor';
import { getAccount, InvalidCredentialsError, type SignedIn } from './accounts';
import { listPasskeys, removePasskey, verifyPasskeyAssertion, type PasskeyView, type RelyingParty } from './passkeys';
import { findPendingSignIn, hasSecondFactor, PendingSignInInvalidError, recordPendingFailure, usePendingSignIn } from './pendingSignIns';
import { recoveryCodesLeft, removeRecoveryCodes, replaceRecoveryCodes, useRecoveryCode } from './recoveryCodes';
import { createSession, type SessionDevice } from './sessions';
import { confirmTotpSetup, hasConfirmedTotp, removeTotp, verifyTotpCode } from './totp';

type Db = Knex | Knex.Transaction;

export interface SecondFactorDeps {
  knex: Knex;
  /** TOTP_ENCRYPTION_KEY, else SIGNING_SECRET */
  encryptionKey: string;
  rp: RelyingParty;
}

export type SecondFactorProof =
  | { method: 'totp'; code: string }
  | { method: 'recovery'; code: string }
  | { method: 'passkey'; challengeId: string; response: AuthenticationResponseJSON };

/** A wrong code or a passkey that did not verify: 401 at sign-in (it counts as a failed attempt), 400 elsewhere. */
export class InvalidSecondFactorError extends DomainError {
  constructor(status: 400 | 401, method: SecondFactorMethod) {
    super(status, TWO_FACTOR_CODES.invalidCode, method === 'passkey' ? TWO_FACTOR_MSG.passkeyRefused : TWO_FACTOR_MSG.invalidCode);
  }
}

/** Whether `proof` is a second factor of the user (a recovery code or a TOTP step is used up by it). */
async function proves(deps: SecondFactorDeps, userId: string, proof: SecondFactorProof): Promise<boolean> {
  if (proof.method === 'totp') return verifyTotpCode(deps, deps.knex, userId, proof.code);
  if (proof.method === 'recovery') return useRecoveryCode(deps.knex, userId, proof.code);
  try {
    await verifyPasskeyAssertion(deps.knex, deps.rp, { challengeId: proof.challengeId, response: proof.response, expectedUserId: userId });
    return true;
  } catch (err) {
    if (err instanceof DomainError && err.code === TWO_FACTOR_CODES.passkeyRefused) return false;
    throw err;
  }
}

async function refuseDeleted(db: Db, userId: string): Promise<void> {
  const row = (await db('users').where({ id: userId }).first('deletion_requested_at')) as { deletion_requested_at: Date | null } | undefined;
  if (!row || row.deletion_requested_at) throw new InvalidCredentialsError();
}

/**
 * The second step of a sign-in: the pending sign-in's person proves a second factor and gets a session. A wrong
 * proof is one of the pending sign-in's 5 failures (401 INVALID_SECOND_FACTOR); an expired, used or spent one is 401
 * SIGN_IN_EXPIRED.
 */
export async function completeSignIn(
  deps: SecondFactorDeps,
  input: { pendingToken: string; proof: SecondFactorProof },
  options: { sessionTtlDays: number; device?: SessionDevice },
): Promise<SignedIn> {
  const pending = await findPendingSignIn(deps.knex, input.pendingToken);
  if (!(await proves(deps, pending.userId, input.proof))) {
    await recordPendingFailure(deps.knex, pending.id);
    throw new InvalidSecondFactorError(401, input.proof.method);
  }
  if (!(await usePendingSignIn(deps.knex, pending.id))) throw new PendingSignInInvalidError();
  await refuseDeleted(deps.knex, pending.userId);
  // single sign-on required since the password step (or its owner exemption gone): no session from the password
  await refuseSsoRequiredFor(deps.knex, pending.userId);
  const session = await createSession(deps.knex, pending.userId, options.sessionTtlDays, { ...options.device, authenticatedWith: 'two_factor' });
  return { user: await getAccount(deps.knex, pending.userId), session };
}

async function refuseSsoRequiredFor(db: Db, userId: string): Promise<void> {
  const user = (await db('users').where({ id: userId }).first('id', 'email')) as { id: string; email: string } | undefined;
  if (user) await refuseWhereSsoRequired(db, user);
}

/** "Sign in with a passkey": a discoverable passkey with user verification is both factors; no password. */
export async function signInWithPasskey(
  deps: SecondFactorDeps,
  input: { challengeId: string; response: AuthenticationResponseJSON },
  options: { sessionTtlDays: number; device?: SessionDevice },
): Promise<SignedIn> {
  let userId: string;
  try {
    ({ userId } = await verifyPasskeyAssertion(deps.knex, deps.rp, { ...input, expectedUserId: null }));
  } catch (err) {
    if (err instanceof DomainError && err.code === TWO_FACTOR_CODES.passkeyRefused) throw new InvalidSecondFactorError(401, 'passkey');
    throw err;
  }
  await refuseDeleted(deps.knex, userId);
  await refuseSsoRequiredFor(deps.knex, userId);
  const session = await createSession(deps.knex, userId, options.sessionTtlDays, { ...options.device, authenticatedWith: 'passkey' });
  return { user: await getAccount(deps.knex, userId), session };
}

/** Proves a second factor for the session in use ("Confirm it's you"): what the actions below need for 10 minutes. */
export async function confirmForSession(deps: SecondFactorDeps, actor: { userId: string; sessionId: string }, proof: SecondFactorProof): Promise<Date> {
  if (!(await hasSecondFactor(deps.knex, actor.userId))) throw new DomainError(409, TWO_FACTOR_CODES.notEnabled, TWO_FACTOR_MSG.notEnabled);
  if (!(await proves(deps, actor.userId, proof))) throw new InvalidSecondFactorError(400, proof.method);
  const now = new Date();
  await deps.knex('sessions').where({ id: actor.sessionId }).update({ second_factor_at: now });
  return new Date(now.getTime() + FRESH_SECOND_FACTOR_MS);
}

/** Until when the session's last proof of a second factor counts as fresh, or null. */
async function freshUntil(db: Db, sessionId: string): Promise<Date | null> {
  const row = (await db('sessions').where({ id: sessionId }).first('second_factor_at')) as { second_factor_at: Date | null } | undefined;
  if (!row?.second_factor_at) return null;
  const until = new Date(new Date(row.second_factor_at).getTime() + FRESH_SECOND_FACTOR_MS);
  return until.getTime() > Date.now() ? until : null;
}

/** 403 SECOND_FACTOR_NEEDED unless the session proved a second factor in the last 10 minutes. */
export async function requireFreshSecondFactor(db: Db, sessionId: string): Promise<void> {
  if (!(await freshUntil(db, sessionId))) throw new DomainError(403, TWO_FACTOR_CODES.freshFactorNeeded, TWO_FACTOR_MSG.freshFactorNeeded);
}

export interface TwoFactorStatus {
  enabled: boolean;
  totp: boolean;
  passkeys: PasskeyView[];
  recoveryCodesLeft: number;
  /** until when this session may turn factors off without confirming again; null: it must confirm first */
  confirmedUntil: Date | null;
}

export async function twoFactorStatus(db: Db, userId: string, sessionId: string): Promise<TwoFactorStatus> {
  const [totp, passkeys, left, until] = await Promise.all([hasConfirmedTotp(db, userId), listPasskeys(db, userId), recoveryCodesLeft(db, userId), freshUntil(db, sessionId)]);
  return { enabled: totp || passkeys.length > 0, totp, passkeys, recoveryCodesLeft: left, confirmedUntil: until };
}

/** The first factor of an account brings its recovery codes (answered once); a further one brings none. */
async function firstRecoveryCodes(db: Db, userId: string): Promise<string[] | null> {
  return (await recoveryCodesLeft(db, userId)) === 0 ? replaceRecoveryCodes(db, userId) : null;
}

/** Confirms the authenticator app with its first code (400 INVALID_SECOND_FACTOR when wrong); answers new recovery codes, if any. */
export async function enableTotp(deps: SecondFactorDeps, userId: string, code: string): Promise<{ recoveryCodes: string[] | null }> {
  const exists = await deps.knex('totp_factors').where({ user_id: userId }).whereNull('confirmed_at').first('user_id');
  if (!exists) throw new DomainError(409, TWO_FACTOR_CODES.setupMissing, TWO_FACTOR_MSG.setupMissing);
  if (!(await confirmTotpSetup(deps, deps.knex, userId, code))) throw new InvalidSecondFactorError(400, 'totp');
  return { recoveryCodes: await firstRecoveryCodes(deps.knex, userId) };
}

/** After a passkey was registered: the recovery codes of a first factor. */
export async function afterPasskeyAdded(db: Db, userId: string): Promise<{ recoveryCodes: string[] | null }> {
  return { recoveryCodes: await firstRecoveryCodes(db, userId) };
}

/** When the last factor went, two-factor sign-in is off: its recovery codes and waiting sign-ins go too. */
async function afterFactorRemoved(db: Db, userId: string): Promise<boolean> {
  if (await hasSecondFactor(db, userId)) return true;
  await removeRecoveryCodes(db, userId);
  await db('pending_sign_ins').where({ user_id: userId }).delete();
  return false;
}

/** Removes the authenticator app (a fresh second factor first); answers whether two-factor sign-in stays on. */
export async function disableTotp(db: Db, actor: { userId: string; sessionId: string }): Promise<{ enabled: boolean }> {
  await requireFreshSecondFactor(db, actor.sessionId);
  if (!(await removeTotp(db, actor.userId))) throw new DomainError(409, TWO_FACTOR_CODES.notEnabled, TWO_FACTOR_MSG.notEnabled);
  return { enabled: await afterFactorRemoved(db, actor.userId) };
}

/** Removes a passkey (a fresh second factor first); answers whether two-factor sign-in stays on. */
export async function deletePasskey(db: Db, actor: { userId: string; sessionId: string }, passkeyId: string): Promise<{ enabled: boolean }> {
  await requireFreshSecondFactor(db, actor.sessionId);
  await removePasskey(db, actor.userId, passkeyId);
  return { enabled: await afterFactorRemoved(db, actor.userId) };
}

/** New recovery codes for old (a fresh second factor first). */
export async function regenerateRecoveryCodes(db: Db, actor: { userId: string; sessionId: string }): Promise<string[]> {
  if (!(await hasSecondFactor(db, actor.userId))) throw new DomainError(409, TWO_FACTOR_CODES.notEnabled, TWO_FACTOR_MSG.notEnabled);
  await requireFreshSecondFactor(db, actor.sessionId);
  return replaceRecoveryCodes(db, actor.userId);
}
