/** Inline rename rule (000 section 5): an empty or unchanged value is not saved. The trimmed name to save, or null. */
export function nameToSave(draft: string, current: string): string | null {
  const name = draft.trim();
  return name && name !== current ? name : null;
}
