/**
 * Personal access tokens (DESIGN.md "Integrations (tokens and webhooks)"): `rs_pat_` + 32 random bytes (base64url).
 * The token is handed out once, at creation; only its sha256 is stored, with its first characters (`prefix`) for
 * lists. A token acts as its user, limited by its scopes (domain/accessTokens.ts; the API's guard,
 * api/tokenScopes.ts, decides each route), until it expires or is revoked.
 *
 * Every request with a token reads its row (one unique-index look-up), so a revocation holds from the very next
 * request in every API process. Its last use (time and address) is written at most once a minute per token, or when
 * the address changes, not on every request.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import {
  ACCESS_TOKEN_MAX_DAYS,
  ACCESS_TOKEN_MSG,
  ACCESS_TOKEN_NAME_MAX,
  ACCESS_TOKEN_PREFIX,
  ACCESS_TOKEN_SHOWN_LENGTH,
  ACCESS_TOKENS_PER_USER,
  TOKEN_SCOPES,
  isTokenScope,
  type TokenScope,
} from '../../domain/accessTokens';
import { DomainError } from '../../domain/errors';
import type { UserRole } from '../../db/models/User';

type Db = Knex | Knex.Transaction;

const TOKEN_BYTES = 32;
/** `rs_pat_` and 43 base64url characters (32 bytes): anything else is not a token and is not looked up. */
const TOKEN_PATTERN = new RegExp(`^${ACCESS_TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`);
/** A token's last use is written again only after this long (or from another address). */
export const LAST_USE_WRITE_INTERVAL_SECONDS = 60;

export class AccessTokenInputError extends DomainError {
  constructor(message: string) {
    super(400, 'ACCESS_TOKEN_INVALID_INPUT', message);
  }
}

export class AccessTokenLimitError extends DomainError {
  constructor() {
    super(409, 'ACCESS_TOKEN_LIMIT', ACCESS_TOKEN_MSG.tooMany);
  }
}

export class AccessTokenNotFoundError extends DomainError {
  constructor() {
    super(404, 'ACCESS_TOKEN_NOT_FOUND', ACCESS_TOKEN_MSG.notFound);
  }
}

/** A token as its owner's list shows it: never the token itself, nor its hash. */
export interface AccessTokenView {
  id: string;
  name: string;
  /** the token's first characters (`rs_pat_` and five more) */
  prefix: string;
  scopes: TokenScope[];
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  lastUsedIp: string | null;
  expired: boolean;
}

export interface CreatedAccessToken {
  /** shown once: only its hash is kept */
  token: string;
  accessToken: AccessTokenView;
}

export interface AccessTokenInput {
  name: string;
  scopes: readonly string[];
  expiresAt?: Date | null;
}

interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  last_used_ip: string | null;
  revoked_at: Date | null;
}

const LIST_COLUMNS = ['id', 'user_id', 'name', 'prefix', 'scopes', 'created_at', 'expires_at', 'last_used_at', 'last_used_ip', 'revoked_at'] as const;

export function hashAccessToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Whether a bearer credential is an access token (rather than a session token): by its prefix. */
export function isAccessToken(credential: string): boolean {
  return credential.startsWith(ACCESS_TOKEN_PREFIX);
}

function toView(row: TokenRow, now = Date.now()): AccessTokenView {
  const expiresAt = row.expires_at ? new Date(row.expires_at) : null;
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: TOKEN_SCOPES.filter((s) => row.scopes.includes(s)),
    createdAt: new Date(row.created_at),
    expiresAt,
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
    lastUsedIp: row.last_used_ip,
    expired: expiresAt !== null && expiresAt.getTime() <= now,
  };
}

function checkedInput(input: AccessTokenInput, now = Date.now()): { name: string; scopes: TokenScope[]; expiresAt: Date | null } {
  const name = input.name.trim();
  if (!name) throw new AccessTokenInputError(ACCESS_TOKEN_MSG.nameRequired);
  if (name.length > ACCESS_TOKEN_NAME_MAX) throw new AccessTokenInputError(ACCESS_TOKEN_MSG.nameTooLong);
  if (input.scopes.length === 0) throw new AccessTokenInputError(ACCESS_TOKEN_MSG.scopesRequired);
  if (!input.scopes.every(isTokenScope)) throw new AccessTokenInputError(ACCESS_TOKEN_MSG.scopeUnknown);
  const scopes = TOKEN_SCOPES.filter((s) => input.scopes.includes(s));
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt) {
    if (expiresAt.getTime() <= now) throw new AccessTokenInputError(ACCESS_TOKEN_MSG.expiryPast);
    if (expiresAt.getTime() > now + ACCESS_TOKEN_MAX_DAYS * 86_400_000) throw new AccessTokenInputError(ACCESS_TOKEN_MSG.expiryTooFar);
  }
  return { name, scopes, expiresAt };
}

/** Active: neither revoked nor expired. */
function active(db: Db, query: Knex.QueryBuilder): Knex.QueryBuilder {
  return query.whereNull('revoked_at').andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()));
}

/**
 * Makes a token for the user: 409 once they hold ACCESS_TOKENS_PER_USER active ones (counted under a lock on the
 * user's row, so parallel requests cannot pass the limit together). The answer is the only time the token is seen.
 */
export async function createAccessToken(knex: Knex, userId: string, input: AccessTokenInput): Promise<CreatedAccessToken> {
  const { name, scopes, expiresAt } = checkedInput(input);
  const token = `${ACCESS_TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`;
  return knex.transaction(async (trx) => {
    await trx('users').where({ id: userId }).forUpdate().first('id');
    const count = await active(trx, trx('access_tokens').where({ user_id: userId })).count<{ n: string }[]>('* as n');
    if (Number(count[0]?.n ?? 0) >= ACCESS_TOKENS_PER_USER) throw new AccessTokenLimitError();
    const [row] = await trx('access_tokens')
      .insert({ user_id: userId, name, prefix: token.slice(0, ACCESS_TOKEN_SHOWN_LENGTH), token_hash: hashAccessToken(token), scopes, expires_at: expiresAt })
      .returning<TokenRow[]>([...LIST_COLUMNS]);
    return { token, accessToken: toView(row) };
  });
}

/** The user's tokens that are not revoked (expired ones too, marked so), newest first. */
export async function listAccessTokens(db: Db, userId: string): Promise<AccessTokenView[]> {
  const rows = await db('access_tokens').where({ user_id: userId }).whereNull('revoked_at').orderBy('created_at', 'desc').select<TokenRow[]>([...LIST_COLUMNS]);
  const now = Date.now();
  return rows.map((row) => toView(row, now));
}

/** Revokes one of the user's tokens; 404 for another user's, an unknown or an already revoked one. */
export async function revokeAccessToken(db: Db, userId: string, tokenId: string): Promise<void> {
  const revoked = await db('access_tokens').where({ id: tokenId, user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
  if (revoked === 0) throw new AccessTokenNotFoundError();
}

/** Who a valid token acts for, as the API's auth middleware loads it. */
export interface TokenUser {
  user: { id: string; email: string; role: UserRole; name: string };
  accessToken: { id: string; scopes: TokenScope[] };
}

/** Why a token was refused, for the audit line (the client is told only that it is invalid). */
export type TokenRefusal = { reason: 'malformed' | 'unknown' } | { reason: 'revoked' | 'expired' | 'account closing'; tokenId: string; userId: string };

/**
 * The user and scopes of a valid token, recording its use from `ip` (at most once a minute, or when the address
 * changed); otherwise why it is refused. A token of an account being deleted is refused like its sign-in.
 */
export async function authenticateAccessToken(db: Db, token: string, ip: string): Promise<TokenUser | TokenRefusal> {
  if (!TOKEN_PATTERN.test(token)) return { reason: 'malformed' };
  const row = await db('access_tokens')
    .join('users', 'users.id', 'access_tokens.user_id')
    .leftJoin('profiles', 'profiles.id', 'users.id')
    .where('access_tokens.token_hash', hashAccessToken(token))
    .first<
      | {
          id: string;
          user_id: string;
          scopes: string[];
          expires_at: Date | null;
          revoked_at: Date | null;
          last_used_at: Date | null;
          last_used_ip: string | null;
          email: string;
          role: UserRole;
          name: string | null;
          deletion_requested_at: Date | null;
          now: Date;
        }
      | undefined
    >(
      'access_tokens.id',
      'access_tokens.user_id',
      'access_tokens.scopes',
      'access_tokens.expires_at',
      'access_tokens.revoked_at',
      'access_tokens.last_used_at',
      'access_tokens.last_used_ip',
      'users.email',
      'users.role',
      'users.deletion_requested_at',
      'profiles.name',
      db.raw('now() as now'),
    );
  if (!row) return { reason: 'unknown' };
  const who = { tokenId: row.id, userId: row.user_id };
  if (row.revoked_at) return { reason: 'revoked', ...who };
  const now = new Date(row.now).getTime();
  if (row.expires_at && new Date(row.expires_at).getTime() <= now) return { reason: 'expired', ...who };
  if (row.deletion_requested_at) return { reason: 'account closing', ...who };
  const stale = !row.last_used_at || now - new Date(row.last_used_at).getTime() >= LAST_USE_WRITE_INTERVAL_SECONDS * 1000;
  if (stale || row.last_used_ip !== ip) await recordUse(db, row.id, ip);
  return {
    user: { id: row.user_id, email: row.email, role: row.role, name: row.name ?? '' },
    accessToken: { id: row.id, scopes: TOKEN_SCOPES.filter((s) => row.scopes.includes(s)) },
  };
}

/**
 * Writes the last use unless another request (another process) already wrote it within the interval from the same
 * address: parallel requests write it once.
 */
async function recordUse(db: Db, tokenId: string, ip: string): Promise<void> {
  await db('access_tokens')
    .where({ id: tokenId })
    .andWhere((q) =>
      q
        .whereNull('last_used_at')
        .orWhere('last_used_at', '<=', db.raw(`now() - make_interval(secs => ?)`, [LAST_USE_WRITE_INTERVAL_SECONDS]))
        .orWhereRaw('last_used_ip is distinct from ?', [ip]),
    )
    .update({ last_used_at: db.fn.now(), last_used_ip: ip });
}

export function isTokenUser(found: TokenUser | TokenRefusal): found is TokenUser {
  return 'user' in found;
}
