/** Avatar initials: from the name, or from the e-mail's local part when the name is blank. */
export function initialsFor(name: string | null | undefined, email: string): string {
  const words = (name ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length > 0) {
    const first = words[0];
    const last = words.length > 1 ? words[words.length - 1] : undefined;
    return ((first?.[0] ?? '') + (last?.[0] ?? '')).toUpperCase();
  }
  const local = email.split('@')[0] ?? '';
  const parts = local.split(/[._+-]+/).filter(Boolean);
  if (parts.length >= 2) return ((parts[0]?.[0] ?? '') + (parts[1]?.[0] ?? '')).toUpperCase();
  return (local[0] ?? '?').toUpperCase();
}
