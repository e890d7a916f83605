/** The listing's page cursor: where a page ends, and its opaque encoding for the client. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Where a page ends: the last item's creation time (to the millisecond, as the listing shows and orders it) and id.
 * The next page starts strictly after it in the listing's order, so items added or removed meanwhile move no other
 * item across the page boundary.
 */
export interface ContentPageKey {
  at: string;
  id: string;
}

/** A UTC time to the millisecond, years 1000-9999 (PostgreSQL has no year 0). */
const ISO_MS = /^[1-9]\d{3}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The opaque cursor handed to the client: base64url of the key. */
export function encodeContentCursor(key: ContentPageKey): string {
  return Buffer.from(JSON.stringify([key.at, key.id])).toString('base64url');
}

/** The key inside a cursor, or null for anything this service did not hand out. */
export function decodeContentCursor(cursor: string): ContentPageKey | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [at, id] = value as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || !ISO_MS.test(at) || !UUID.test(id)) return null;
  if (Number.isNaN(Date.parse(at)) || new Date(at).toISOString() !== at) return null;
  return { at, id: id.toLowerCase() };
}
