/**
 * The rule for user-supplied text (DESIGN.md "Security"; issue 15): no NUL or other control characters (C0, DEL,
 * C1) and no unpaired UTF-16 surrogates, which PostgreSQL refuses (22021) or would store mangled. Multi-line
 * fields (prompts, descriptions, messages) may also hold line feeds and tabs. The API applies it before any
 * database or workflow sees the text (api/validation.ts); activities apply it again to workflow inputs.
 */

export type TextShape = 'single-line' | 'multi-line';

function codePointLabel(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** What is wrong with `value` under the rule, as the end of a sentence ("contains ..."), or null when it is fine. */
export function textInputProblem(value: string, shape: TextShape = 'single-line'): string | null {
  for (let i = 0; i < value.length; i += 1) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i += 1;
        continue;
      }
      return `contains invalid Unicode (an unpaired surrogate ${codePointLabel(value[i])})`;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return `contains invalid Unicode (an unpaired surrogate ${codePointLabel(value[i])})`;
    const control = unit < 0x20 || (unit >= 0x7f && unit <= 0x9f);
    if (!control) continue;
    if (shape === 'multi-line' && (unit === 0x0a || unit === 0x09)) continue;
    if (unit === 0x0a || unit === 0x09 || unit === 0x0d) return 'must be a single line (no line breaks or tabs)';
    return `contains a control character (${codePointLabel(value[i])}), which is not allowed`;
  }
  return null;
}

/** Where in a parsed JSON value (or form fields) the first string, or key, breaking the rule is, with the problem. */
export function findTextInputProblem(value: unknown, shape: TextShape = 'multi-line', path: string[] = []): { path: string[]; problem: string } | null {
  if (typeof value === 'string') {
    const problem = textInputProblem(value, shape);
    return problem ? { path, problem } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findTextInputProblem(value[i], shape, [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = textInputProblem(key, 'single-line');
      if (keyProblem) return { path: [...path, '(field name)'], problem: keyProblem };
      const found = findTextInputProblem(item, shape, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
