/**
 * Workspace identity providers' client secrets at rest: AES-256-GCM with a key derived (HKDF-SHA256, its own info
 * string) from the same key material as the TOTP secrets (TOTP_ENCRYPTION_KEY, else SIGNING_SECRET). A stored value
 * is `v1.<iv>.<tag>.<ciphertext>` (base64url) bound to its workspace (the workspace id is the additional data), so a
 * copied row does not open for another workspace. The secret is never logged or answered after it is set.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const keys = new Map<string, Buffer>();

function keyOf(material: string): Buffer {
  let key = keys.get(material);
  if (!key) {
    if (material.length < 32) throw new Error('the encryption key of SSO client secrets must be at least 32 characters');
    key = Buffer.from(hkdfSync('sha256', material, 'render-studio', 'workspace-sso-client-secrets-v1', 32));
    keys.set(material, key);
  }
  return key;
}

export function sealClientSecret(material: string, workspaceId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(material), iv);
  cipher.setAAD(Buffer.from(workspaceId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
}

/** The secret, or null when the value was sealed with another key (or for another workspace) or is malformed. */
export function openClientSecret(material: string, workspaceId: string, stored: string): string | null {
  const [version, iv, tag, sealed] = stored.split('.');
  if (version !== 'v1' || !iv || !tag || sealed === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(material), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(workspaceId));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
