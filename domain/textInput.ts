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

/**
 * Where in a parsed JSON value (or form fields) the first string, or key, breaking the rule is, with the problem.
 * Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function findTextInputProblem(value: unknown, shape: TextShape = 'multi-line'): { path: string[]; problem: string } | null {
  interface Node {
    value: unknown;
    key: string | null;
    parent: Node | null;
  }
  const pathOf = (node: Node | null, last?: string): string[] => {
    const reversed = last === undefined ? [] : [last];
    for (let n = node; n && n.key !== null; n = n.parent) reversed.push(n.key);
    return reversed.reverse();
  };
  const stack: Node[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const item = node.value;
    if (typeof item === 'string') {
      const problem = textInputProblem(item, shape);
      if (problem) return { path: pathOf(node), problem };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i -= 1) stack.push({ value: item[i], key: String(i), parent: node });
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (const [key] of entries) {
        const keyProblem = textInputProblem(key, 'single-line');
        if (keyProblem) return { path: pathOf(node, '(field name)'), problem: keyProblem };
      }
      for (let i = entries.length - 1; i >= 0; i -= 1) stack.push({ value: entries[i][1], key: entries[i][0], parent: node });
    }
  }
  return null;
}
