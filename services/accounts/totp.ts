/**
 * The authenticator app (TOTP, RFC 6238, with otplib): set up from a QR code made here (the `qrcode` package, a data
 * URL: no request leaves the server), confirmed by a first code, then asked at sign-in. Codes are 6 digits a
 * 30-second step, one step of drift either way; a step once accepted is never accepted again (replay). The secret is
 * kept encrypted (./totpSecrets.ts).
 */
import type { Knex } from 'knex';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { DomainError } from '../../domain/errors';
import { TOTP_DIGITS, TOTP_DRIFT_STEPS, TOTP_PERIOD_SECONDS, TWO_FACTOR_CODES, TWO_FACTOR_MSG } from '../../domain/twoFactor';
import { decryptTotpSecret, encryptTotpSecret } from './totpSecrets';

type Db = Knex | Knex.Transaction;

export const TOTP_ISSUER = 'Render Studio';

export interface TotpDeps {
  knex: Knex;
  /** TOTP_ENCRYPTION_KEY, else SIGNING_SECRET */
  encryptionKey: string;
}

export interface TotpSetup {
  /** the secret in base32, for typing into an app that cannot scan */
  secret: string;
  otpauthUrl: string;
  /** a PNG data URL of the otpauth URL's QR code */
  qrCode: string;
}

interface FactorRow {
  secret_ciphertext: string;
  last_used_step: string | number | null;
  confirmed_at: Date | null;
}

async function factorOf(db: Db, userId: string): Promise<FactorRow | undefined> {
  return (await db('totp_factors').where({ user_id: userId }).first('secret_ciphertext', 'last_used_step', 'confirmed_at')) as FactorRow | undefined;
}

export async function hasConfirmedTotp(db: Db, userId: string): Promise<boolean> {
  return (await factorOf(db, userId))?.confirmed_at != null;
}

/** Starts (or starts again) the set-up: a new secret, kept unconfirmed until a code from the app confirms it. 409 when an app is set up. */
export async function beginTotpSetup(deps: TotpDeps, user: { id: string; email: string }): Promise<TotpSetup> {
  const existing = await factorOf(deps.knex, user.id);
  if (existing?.confirmed_at) throw new DomainError(409, TWO_FACTOR_CODES.alreadyOn, TWO_FACTOR_MSG.alreadyOn);
  const secret = generateSecret();
  const ciphertext = encryptTotpSecret(deps.encryptionKey, user.id, secret);
  await deps.knex('totp_factors')
    .insert({ user_id: user.id, secret_ciphertext: ciphertext, last_used_step: null, confirmed_at: null })
    .onConflict('user_id')
    .merge(['secret_ciphertext', 'last_used_step', 'confirmed_at', 'created_at']);
  const otpauthUrl = generateURI({ issuer: TOTP_ISSUER, label: user.email, secret, digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS });
  const qrCode = await QRCode.toDataURL(otpauthUrl, { errorCorrectionLevel: 'M', margin: 2, width: 240 });
  return { secret, otpauthUrl, qrCode };
}

/**
 * Checks `code` against the user's app and, when it is right, records its step so it is never accepted again (one
 * conditional update: two requests with the same code cannot both pass). `confirmed` says which set-up to check
 * against: the confirmed app (sign-in) or the one being set up.
 */
async function acceptCode(deps: TotpDeps, db: Db, userId: string, code: string, confirmed: boolean): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  const row = await factorOf(db, userId);
  if (!row || (row.confirmed_at != null) !== confirmed) return false;
  const secret = decryptTotpSecret(deps.encryptionKey, userId, row.secret_ciphertext);
  if (!secret) return false;
  const lastStep = row.last_used_step === null ? undefined : Number(row.last_used_step);
  const result = await verify({
    secret,
    token: code,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    epochTolerance: TOTP_DRIFT_STEPS * TOTP_PERIOD_SECONDS,
    ...(lastStep === undefined ? {} : { afterTimeStep: lastStep }),
  });
  const step = result.valid && 'timeStep' in result ? result.timeStep : null;
  if (step === null) return false;
  const updated = await db('totp_factors')
    .where({ user_id: userId })
    .andWhere((q) => q.whereNull('last_used_step').orWhere('last_used_step', '<', step))
    .update({ last_used_step: step, ...(confirmed ? {} : { confirmed_at: db.fn.now() }) });
  return updated > 0;
}

/** Confirms the set-up with a first code from the app: true when it was right (the app is then on). */
export async function confirmTotpSetup(deps: TotpDeps, db: Db, userId: string, code: string): Promise<boolean> {
  return acceptCode(deps, db, userId, code.trim(), false);
}

/** A code from the user's confirmed app, good once. */
export async function verifyTotpCode(deps: TotpDeps, db: Db, userId: string, code: string): Promise<boolean> {
  return acceptCode(deps, db, userId, code.replace(/\s/g, ''), true);
}

export async function removeTotp(db: Db, userId: string): Promise<boolean> {
  return (await db('totp_factors').where({ user_id: userId }).delete()) > 0;
}
