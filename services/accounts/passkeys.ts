/**
 * Passkeys (WebAuthn, with @simplewebauthn/server): a person registers several, names and removes them; each is a
 * second factor after the password, and, being a discoverable credential checked with user verification, a sign-in
 * on its own ("Sign in with a passkey"). The relying party is PUBLIC_URL: its host name is the RP ID and its origin
 * the only origin accepted. Every ceremony uses a challenge made here, kept 5 minutes and good once
 * (`webauthn_challenges`).
 */
import type { Knex } from 'knex';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { DomainError } from '../../domain/errors';
import { MAX_PASSKEYS, TWO_FACTOR_CODES, TWO_FACTOR_MSG, WEBAUTHN_CHALLENGE_TTL_MS } from '../../domain/twoFactor';

type Db = Knex | Knex.Transaction;

export const RP_NAME = 'Render Studio';

export interface RelyingParty {
  rpId: string;
  origin: string;
}

/** The relying party PUBLIC_URL names. */
export function relyingPartyOf(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { rpId: url.hostname, origin: url.origin };
}

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  backedUp: boolean;
}

interface PasskeyRow {
  id: string;
  user_id: string;
  name: string;
  credential_key: string;
  public_key: Buffer;
  sign_count: string | number;
  transports: string[];
  backed_up: boolean;
  created_at: Date;
  last_used_at: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function refused(): DomainError {
  return new DomainError(400, TWO_FACTOR_CODES.passkeyRefused, TWO_FACTOR_MSG.passkeyRefused);
}

function toView(row: PasskeyRow): PasskeyView {
  return { id: row.id, name: row.name, createdAt: new Date(row.created_at), lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null, backedUp: row.backed_up };
}

export async function listPasskeys(db: Db, userId: string): Promise<PasskeyView[]> {
  const rows = (await db('passkeys').where({ user_id: userId }).orderBy('created_at', 'asc').select('*')) as PasskeyRow[];
  return rows.map(toView);
}

export async function passkeyCount(db: Db, userId: string): Promise<number> {
  const row = (await db('passkeys').where({ user_id: userId }).count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

async function storeChallenge(db: Db, userId: string | null, purpose: 'registration' | 'authentication', challenge: string): Promise<string> {
  // a person's unfinished ceremonies of the same kind end with a new one
  if (userId) await db('webauthn_challenges').where({ user_id: userId, purpose }).whereNull('used_at').update({ used_at: db.fn.now() });
  await db('webauthn_challenges').where('expires_at', '<', new Date(Date.now() - 60 * 60_000)).delete();
  const [row] = (await db('webauthn_challenges')
    .insert({ user_id: userId, purpose, challenge, expires_at: new Date(Date.now() + WEBAUTHN_CHALLENGE_TTL_MS) })
    .returning('id')) as Array<{ id: string }>;
  return row.id;
}

/** Uses the challenge up (once): its text and person, or null when unknown, expired, used or of another purpose. */
async function takeChallenge(db: Db, challengeId: string, purpose: 'registration' | 'authentication'): Promise<{ challenge: string; userId: string | null } | null> {
  if (!UUID.test(challengeId)) return null;
  const rows = (await db('webauthn_challenges')
    .where({ id: challengeId, purpose })
    .whereNull('used_at')
    .andWhere('expires_at', '>', db.fn.now())
    .update({ used_at: db.fn.now() })
    .returning(['challenge', 'user_id'])) as Array<{ challenge: string; user_id: string | null }>;
  return rows[0] ? { challenge: rows[0].challenge, userId: rows[0].user_id } : null;
}

/** What the browser's navigator.credentials.create() needs to make a passkey for this person, and the challenge's id. */
export async function passkeyRegistrationOptions(
  db: Db,
  rp: RelyingParty,
  user: { id: string; email: string; name: string },
): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  const existing = (await db('passkeys').where({ user_id: user.id }).select('credential_key', 'transports')) as Array<{ credential_key: string; transports: string[] }>;
  if (existing.length >= MAX_PASSKEYS) throw new DomainError(409, TWO_FACTOR_CODES.tooManyPasskeys, TWO_FACTOR_MSG.tooManyPasskeys);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.rpId,
    userName: user.email,
    userDisplayName: user.name || user.email,
    userID: Buffer.from(user.id.replace(/-/g, ''), 'hex'),
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.credential_key, transports: c.transports as AuthenticatorTransportFuture[] })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  const challengeId = await storeChallenge(db, user.id, 'registration', options.challenge);
  return { challengeId, options };
}

/** Checks the browser's answer against the challenge and keeps the new passkey under `name`. */
export async function registerPasskey(
  db: Db,
  rp: RelyingParty,
  userId: string,
  input: { challengeId: string; name: string; response: RegistrationResponseJSON },
): Promise<PasskeyView> {
  const challenge = await takeChallenge(db, input.challengeId, 'registration');
  if (!challenge || challenge.userId !== userId) throw refused();
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      requireUserVerification: true,
    });
  } catch {
    throw refused();
  }
  if (!verified.verified) throw refused();
  const { credential, credentialBackedUp } = verified.registrationInfo;
  if (await db('passkeys').where({ credential_key: credential.id }).first('id')) throw refused();
  const [row] = (await db('passkeys')
    .insert({
      user_id: userId,
      name: input.name,
      credential_key: credential.id,
      public_key: Buffer.from(credential.publicKey),
      sign_count: credential.counter,
      transports: credential.transports ?? [],
      backed_up: credentialBackedUp,
    })
    .returning('*')) as PasskeyRow[];
  return toView(row);
}

/**
 * What navigator.credentials.get() needs: for a second step, the person's passkeys; for a password-less sign-in
 * (`userId` null), any discoverable passkey of this site.
 */
export async function passkeyAuthenticationOptions(
  db: Db,
  rp: RelyingParty,
  userId: string | null,
): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const allow = userId
    ? ((await db('passkeys').where({ user_id: userId }).select('credential_key', 'transports')) as Array<{ credential_key: string; transports: string[] }>)
    : [];
  const options = await generateAuthenticationOptions({
    rpID: rp.rpId,
    userVerification: userId ? 'preferred' : 'required',
    allowCredentials: allow.map((c) => ({ id: c.credential_key, transports: c.transports as AuthenticatorTransportFuture[] })),
  });
  const challengeId = await storeChallenge(db, userId, 'authentication', options.challenge);
  return { challengeId, options };
}

/**
 * Checks an assertion: the challenge (once), the passkey (of `expectedUserId` when given), the origin and RP ID, the
 * signature and its counter (which must grow, when the authenticator counts). A password-less sign-in needs user
 * verification (the passkey is then both factors). Answers whose passkey it was.
 */
export async function verifyPasskeyAssertion(
  db: Db,
  rp: RelyingParty,
  input: { challengeId: string; response: AuthenticationResponseJSON; expectedUserId: string | null },
): Promise<{ userId: string; passkeyId: string }> {
  const challenge = await takeChallenge(db, input.challengeId, 'authentication');
  if (!challenge || challenge.userId !== input.expectedUserId) throw refused();
  const row = (await db('passkeys').where({ credential_key: String(input.response.id ?? '') }).first('*')) as PasskeyRow | undefined;
  if (!row || (input.expectedUserId !== null && row.user_id !== input.expectedUserId)) throw refused();
  let result;
  try {
    result = await verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      credential: { id: row.credential_key, publicKey: new Uint8Array(row.public_key), counter: Number(row.sign_count), transports: row.transports as AuthenticatorTransportFuture[] },
      requireUserVerification: input.expectedUserId === null,
    });
  } catch {
    throw refused();
  }
  if (!result.verified) throw refused();
  await db('passkeys')
    .where({ id: row.id })
    .update({ sign_count: result.authenticationInfo.newCounter, backed_up: result.authenticationInfo.credentialBackedUp, last_used_at: db.fn.now() });
  return { userId: row.user_id, passkeyId: row.id };
}

export async function renamePasskey(db: Db, userId: string, passkeyId: string, name: string): Promise<PasskeyView> {
  if (!UUID.test(passkeyId)) throw new DomainError(404, TWO_FACTOR_CODES.passkeyNotFound, TWO_FACTOR_MSG.passkeyNotFound);
  const [row] = (await db('passkeys').where({ id: passkeyId, user_id: userId }).update({ name }).returning('*')) as PasskeyRow[];
  if (!row) throw new DomainError(404, TWO_FACTOR_CODES.passkeyNotFound, TWO_FACTOR_MSG.passkeyNotFound);
  return toView(row);
}

export async function removePasskey(db: Db, userId: string, passkeyId: string): Promise<void> {
  if (!UUID.test(passkeyId)) throw new DomainError(404, TWO_FACTOR_CODES.passkeyNotFound, TWO_FACTOR_MSG.passkeyNotFound);
  const removed = await db('passkeys').where({ id: passkeyId, user_id: userId }).delete();
  if (removed === 0) throw new DomainError(404, TWO_FACTOR_CODES.passkeyNotFound, TWO_FACTOR_MSG.passkeyNotFound);
}
