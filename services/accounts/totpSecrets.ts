/**
 * TOTP secrets at rest: AES-256-GCM with a key derived (HKDF-SHA256) from TOTP_ENCRYPTION_KEY, or SIGNING_SECRET when
 * that is unset (config/env.ts). A stored value is `v1.<iv>.<tag>.<ciphertext>` (base64url), bound to the account it
 * belongs to (the user id is the additional data), so a copied row does not open on another account. The secret is
 * never logged, answered after its set-up, or written into a data export.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const keys = new Map<string, Buffer>();

function keyOf(material: string): Buffer {
  let key = keys.get(material);
  if (!key) {
    if (material.length < 32) throw new Error('the TOTP encryption key must be at least 32 characters');
    key = Buffer.from(hkdfSync('sha256', material, 'render-studio', 'totp-secrets-v1', 32));
    keys.set(material, key);
  }
  return key;
}

export function encryptTotpSecret(material: string, userId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(material), iv);
  cipher.setAAD(Buffer.from(userId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
}

/** The secret, or null when the value was made with another key (or for another account) or is malformed. */
export function decryptTotpSecret(material: string, userId: string, stored: string): string | null {
  const [version, iv, tag, sealed] = stored.split('.');
  if (version !== 'v1' || !iv || !tag || sealed === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(material), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(userId));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
