import type { CommentPin } from '../../../../domain/comments';

/** "0:07", "1:02:05": a time pin as the list shows it. */
export function timeText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

/** What a pin says to a screen reader and in its title: "Point at 40% across, 25% down, at 0:03". */
export function pinText(pin: CommentPin): string {
  const parts: string[] = [];
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  if (pin.x !== undefined && pin.y !== undefined) {
    parts.push(pin.w !== undefined && pin.h !== undefined ? `Area from ${pct(pin.x)} across, ${pct(pin.y)} down, ${pct(pin.w)} wide, ${pct(pin.h)} high` : `Point at ${pct(pin.x)} across, ${pct(pin.y)} down`);
  }
  if (pin.t !== undefined) parts.push(`at ${timeText(pin.t)}`);
  return parts.join(', ');
}

/** "just now", "5 min ago", "3 h ago", else the date: when a comment was written. */
export function whenText(iso: string, now: number = Date.now()): string {
  const ms = now - new Date(iso).getTime();
  if (ms < 60_000) return 'just now';
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)} h ago`;
  return new Date(iso).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
}

/** The "@query" being typed just before the caret, or null: what the mention list filters by. */
export function mentionQueryAt(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@]{0,40})$/.exec(before);
  if (!m) return null;
  return { start: caret - m[2].length - 1, query: m[2] };
}

/** Members whose name (or e-mail) starts with the query or has a word starting with it, at most `limit`. */
export function mentionCandidates<T extends { name: string; email?: string }>(members: readonly T[], query: string, limit = 6): T[] {
  const q = query.toLowerCase();
  return members
    .filter((m) => !q || m.name.toLowerCase().split(/\s+/).some((w) => w.startsWith(q)) || m.name.toLowerCase().startsWith(q) || (m.email ?? '').toLowerCase().startsWith(q))
    .slice(0, limit);
}

/** A rectangle drawn from one corner to another, in fractions, clamped inside the picture; a tiny drag is a point. */
export function pinFromDrag(a: { x: number; y: number }, b: { x: number; y: number }): CommentPin {
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  const x1 = clamp(Math.min(a.x, b.x));
  const y1 = clamp(Math.min(a.y, b.y));
  const x2 = clamp(Math.max(a.x, b.x));
  const y2 = clamp(Math.max(a.y, b.y));
  if (x2 - x1 < 0.02 && y2 - y1 < 0.02) return { x: clamp(a.x), y: clamp(a.y) };
  return { x: x1, y: y1, w: Math.max(0.001, x2 - x1), h: Math.max(0.001, y2 - y1) };
}
