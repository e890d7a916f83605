/**
 * fal.ai's webhook signatures (its documented scheme): each callback carries
 *   X-Fal-Webhook-Request-Id, X-Fal-Webhook-User-Id, X-Fal-Webhook-Timestamp (unix seconds), X-Fal-Webhook-Signature (hex)
 * and the signature is ED25519 over `${requestId}\n${userId}\n${timestamp}\n${sha256hex(body)}`, made with one of the
 * keys fal publishes as a JWKS (OKP / Ed25519, `x` base64url). A timestamp more than 300 s from now is refused, so a
 * captured callback cannot be sent again later. The key set is fetched once and kept (fal says up to 24 h); a signature
 * no kept key verifies fetches it again (at most once a minute), so a rotated key is picked up.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';

export const FAL_WEBHOOK_HEADERS = {
  requestId: 'x-fal-webhook-request-id',
  userId: 'x-fal-webhook-user-id',
  timestamp: 'x-fal-webhook-timestamp',
  signature: 'x-fal-webhook-signature',
} as const;

/** How far a callback's timestamp may be from this server's clock (s). */
export const FAL_WEBHOOK_TOLERANCE_SECONDS = 300;
const KEYS_KEPT_MS = 24 * 60 * 60 * 1000;
const REFETCH_AFTER_MS = 60 * 1000;

export type FalWebhookRefusal = 'missing_headers' | 'stale_timestamp' | 'bad_signature' | 'keys_unavailable';

export type FalWebhookVerdict = { ok: true; requestId: string; userId: string } | { ok: false; reason: FalWebhookRefusal };

export interface FalWebhookKeySource {
  /** The keys; `fresh` asks for a new fetch (the kept ones did not verify). */
  keys(fresh?: boolean): Promise<KeyObject[]>;
}

interface JsonWebKey {
  kty?: unknown;
  crv?: unknown;
  x?: unknown;
}

/** ED25519 public keys of a JWKS document; other keys are skipped. */
export function ed25519KeysOf(jwks: unknown): KeyObject[] {
  const keys = typeof jwks === 'object' && jwks !== null && Array.isArray((jwks as { keys?: unknown }).keys) ? ((jwks as { keys: JsonWebKey[] }).keys) : [];
  const out: KeyObject[] = [];
  for (const key of keys) {
    if (key?.kty !== 'OKP' || key.crv !== 'Ed25519' || typeof key.x !== 'string') continue;
    try {
      out.push(createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.x }, format: 'jwk' }));
    } catch {
      // a malformed key verifies nothing
    }
  }
  return out;
}

/** The key set at `url`, fetched on first use and kept; `now` replaces the clock (tests). */
export function falWebhookKeysFrom(url: string, options: { fetch?: typeof fetch; now?: () => number; timeoutMs?: number } = {}): FalWebhookKeySource {
  const doFetch = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  let kept: { keys: KeyObject[]; at: number } | null = null;
  let pending: Promise<KeyObject[]> | null = null;
  const load = (): Promise<KeyObject[]> => {
    pending ??= (async () => {
      try {
        const response = await doFetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
        if (!response.ok) throw new Error(`fal's webhook key set answered HTTP ${response.status}`);
        const keys = ed25519KeysOf(await response.json());
        kept = { keys, at: now() };
        return keys;
      } finally {
        pending = null;
      }
    })();
    return pending;
  };
  return {
    async keys(fresh = false) {
      if (kept && now() - kept.at < KEYS_KEPT_MS && !(fresh && now() - kept.at >= REFETCH_AFTER_MS)) return kept.keys;
      return load();
    },
  };
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
}

/** The message fal signs for a callback. */
export function falWebhookMessage(requestId: string, userId: string, timestamp: string, body: Buffer): Buffer {
  return Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${createHash('sha256').update(body).digest('hex')}`, 'utf8');
}

/** Checks one callback: its headers (lower-case names, as Node gives them), the exact body bytes, fal's keys. */
export async function verifyFalWebhook(
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
  source: FalWebhookKeySource,
  nowMs: number = Date.now(),
): Promise<FalWebhookVerdict> {
  const requestId = header(headers, FAL_WEBHOOK_HEADERS.requestId);
  const userId = header(headers, FAL_WEBHOOK_HEADERS.userId);
  const timestamp = header(headers, FAL_WEBHOOK_HEADERS.timestamp);
  const signatureHex = header(headers, FAL_WEBHOOK_HEADERS.signature);
  if (!requestId || !userId || !/^\d{1,12}$/.test(timestamp) || !/^(?:[0-9a-f]{2})+$/i.test(signatureHex)) return { ok: false, reason: 'missing_headers' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > FAL_WEBHOOK_TOLERANCE_SECONDS) return { ok: false, reason: 'stale_timestamp' };
  const message = falWebhookMessage(requestId, userId, timestamp, body);
  const signature = Buffer.from(signatureHex, 'hex');
  const verifiedBy = (keys: KeyObject[]) =>
    keys.some((key) => {
      try {
        return verify(null, message, key, signature);
      } catch {
        return false;
      }
    });
  let keys: KeyObject[];
  try {
    keys = await source.keys();
    if (verifiedBy(keys)) return { ok: true, requestId, userId };
    // a key fal has rotated in since: one fresh look
    keys = await source.keys(true);
  } catch {
    return { ok: false, reason: 'keys_unavailable' };
  }
  return verifiedBy(keys) ? { ok: true, requestId, userId } : { ok: false, reason: 'bad_signature' };
}
