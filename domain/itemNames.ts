/**
 * Names of generated items, so several made from one render can be told apart (issue 32): the source's name, then
 * what was asked (the prompt's first words, or the effect), then a counter when the project already holds that name:
 * "mid-a — warm dusk light.jpg", "mid-a — warm dusk light (2).jpg". Pure: used by workflows and activities.
 */

/** Words of the prompt kept in a name, and the label's longest length in characters. */
export const NAME_PROMPT_WORDS = 6;
export const NAME_LABEL_MAX = 48;

/** A file name's stem without its extension or folders, with characters unsafe in a file name replaced. */
export function fileStem(fileName: string, fallback = 'image'): string {
  const stem = fileName
    .replace(/^.*[\\/]/, '')
    .replace(/\.[A-Za-z0-9]{1,5}$/, '')
    .replace(/[\u0000-\u001f<>:"/\\|?*]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80);
  return stem || fallback;
}

/** The prompt's first words, lower case, without punctuation at the ends: "Warm dusk light, please!" -> "warm dusk light, please". */
export function promptLabel(prompt: string): string {
  const words = prompt
    .replace(/[\u0000-\u001f<>:"/\\|?*]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, NAME_PROMPT_WORDS)
    .join(' ')
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '')
    .toLowerCase();
  if (words.length <= NAME_LABEL_MAX) return words;
  return `${words.slice(0, NAME_LABEL_MAX).replace(/\s+\S*$/, '')}…`;
}

/** An AI image's name: "<source> — <prompt's first words>.<ext>" ("AI edit" when the prompt has no words). */
export function editedImageFileName(sourceFileName: string, prompt: string, ext: string): string {
  return `${fileStem(sourceFileName)} — ${promptLabel(prompt) || 'AI edit'}.${ext}`;
}

/**
 * `name` itself when no name in `taken` is the same (case-insensitively); else "<stem> (n).<ext>" with the lowest
 * n from 2 that is free.
 */
export function withCounter(name: string, taken: Iterable<string>): string {
  const used = new Set([...taken].map((t) => t.toLowerCase()));
  if (!used.has(name.toLowerCase())) return name;
  const match = /^(.*?)(\.[A-Za-z0-9]{1,5})?$/.exec(name) as RegExpExecArray;
  const stem = match[1];
  const ext = match[2] ?? '';
  for (let n = 2; ; n += 1) {
    const candidate = `${stem} (${n})${ext}`;
    if (!used.has(candidate.toLowerCase())) return candidate;
  }
}
