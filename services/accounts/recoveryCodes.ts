/**
 * Recovery codes (DESIGN.md "Accounts"): 10 codes of 80 random bits (16 base32 characters, shown as four groups of
 * four), shown once when made; only their sha256 is kept. Each is good once. Making new ones retires the old.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { RECOVERY_CODE_COUNT } from '../../domain/twoFactor';

type Db = Knex | Knex.Transaction;

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Upper case, without spaces and dashes: what a person may type of a code shown as `ABCD-EFGH-JKLM-NPQR`. */
export function normalizeRecoveryCode(raw: string): string {
  return raw.replace(/[\s-]/g, '').toUpperCase();
}

export function recoveryCodeHash(raw: string): string {
  return createHash('sha256').update(normalizeRecoveryCode(raw)).digest('hex');
}

function newCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

/** Replaces the user's recovery codes with 10 new ones and answers them (the only time they are shown). */
export async function replaceRecoveryCodes(db: Db, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
  await db('recovery_codes').where({ user_id: userId }).delete();
  await db('recovery_codes').insert(codes.map((code) => ({ user_id: userId, code_hash: recoveryCodeHash(code) })));
  return codes;
}

/** Uses one of the user's unused codes: true when it was one (one statement: two requests cannot both use it). */
export async function useRecoveryCode(db: Db, userId: string, raw: string): Promise<boolean> {
  const code = normalizeRecoveryCode(raw);
  if (!/^[A-Z0-9]{16}$/.test(code)) return false;
  const used = await db('recovery_codes')
    .where({ user_id: userId, code_hash: recoveryCodeHash(code) })
    .whereNull('used_at')
    .update({ used_at: db.fn.now() });
  return used > 0;
}

export async function recoveryCodesLeft(db: Db, userId: string): Promise<number> {
  const row = (await db('recovery_codes').where({ user_id: userId }).whereNull('used_at').count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

export async function removeRecoveryCodes(db: Db, userId: string): Promise<void> {
  await db('recovery_codes').where({ user_id: userId }).delete();
}
