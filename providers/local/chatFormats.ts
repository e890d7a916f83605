/**
 * The rule-based chat's ear for the formats one edit renders (issue 44 items 4 and 5): "also make a square one", "a
 * 4:5 version too", "and one for YouTube", "drop the square one", "only the vertical one". Reads the latest message
 * against the formats the assembly renders now and answers every format it is to render, with the change in words.
 *
 * A format is named by its ratio (9:16, 1:1, 4:5, 16:9, also written 1x1), by the platform it is posted to ("for
 * Reels", "for YouTube"), or by its shape with a word that makes it a version of the video ("a square one", "the
 * vertical cut", "landscape version"): a square alone may be a plaza in the render, and "vertical" a wipe.
 */
import { ASSEMBLY_FORMATS, ASSEMBLY_FORMAT_SPECS, type AssemblyFormat } from '../../domain/assembly';

const VERSION = '(?:one|ones|version|versions|cut|cuts|format|formats|video|videos|copy|copies|edit|post|posts)';

/** What names each format: its ratio, or its shape followed by a version word, or "for <where it is posted>". */
const NAMES: Record<AssemblyFormat, RegExp> = {
  '9:16': new RegExp(`\\b9\\s?[:x]\\s?16\\b|\\b(?:vertical|portrait|upright|tall)\\s+${VERSION}\\b|\\bfor\\s+(?:the\\s+)?(?:reels?|tiktok|stories|story|shorts)\\b`),
  '1:1': new RegExp(`\\b1\\s?[:x]\\s?1\\b|\\bsquare\\s+${VERSION}\\b|\\bfor\\s+(?:the\\s+)?(?:instagram\\s+)?grid\\b`),
  '4:5': new RegExp(`\\b4\\s?[:x]\\s?5\\b|\\bfeed\\s+${VERSION}\\b|\\bfor\\s+(?:the\\s+)?(?:instagram\\s+)?feed\\b`),
  '16:9': new RegExp(`\\b16\\s?[:x]\\s?9\\b|\\b(?:landscape|horizontal|widescreen|wide)\\s+${VERSION}\\b|\\bfor\\s+(?:youtube|the\\s+website|our\\s+website)\\b`),
};

const REMOVE = /\b(?:no|without|drop|remove|skip|lose|cancel|forget|not)\b(?:\s+(?:the|a|an|any|that))?\s*$/;
const ONLY = /\b(?:only|just)\b/;

/** A format as the reply says it: "Square (1:1)". */
export function spokenFormat(format: AssemblyFormat): string {
  return `${ASSEMBLY_FORMAT_SPECS[format].label} (${format})`;
}

function spokenList(formats: readonly AssemblyFormat[]): string {
  const words = formats.map(spokenFormat);
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

export interface FormatsUnderstanding {
  /** Every format to render from now on; undefined: the message said nothing about formats. */
  formats?: AssemblyFormat[];
  /** The change in words, for the reply. */
  words?: string;
}

/**
 * The formats `message` asks for, over `current` (the formats rendered now; empty when not known) with `own` (the
 * selection's platform format) standing in for them when not known. The last format is never removed.
 */
export function understandFormats(message: string, current: readonly AssemblyFormat[] | undefined, own: AssemblyFormat | null | undefined): FormatsUnderstanding {
  const base: AssemblyFormat[] = current && current.length > 0 ? [...current] : own ? [own] : [];
  const adds = new Set<AssemblyFormat>();
  const removes = new Set<AssemblyFormat>();
  const only = new Set<AssemblyFormat>();
  for (const sentence of message.toLowerCase().split(/[.!?;]+/)) {
    for (const format of ASSEMBLY_FORMATS) {
      const named = NAMES[format].exec(sentence);
      if (!named) continue;
      const before = sentence.slice(0, named.index);
      if (REMOVE.test(before)) removes.add(format);
      else if (ONLY.test(before)) only.add(format);
      else adds.add(format);
    }
  }
  if (adds.size === 0 && removes.size === 0 && only.size === 0) return {};

  let next: AssemblyFormat[];
  if (only.size > 0) next = ASSEMBLY_FORMATS.filter((f) => only.has(f) || adds.has(f));
  else next = ASSEMBLY_FORMATS.filter((f) => (base.includes(f) || adds.has(f)) && !removes.has(f));
  const sentences: string[] = [];
  if (next.length === 0) {
    // everything named was removed: the last one stays (an assembly renders at least one format)
    next = ASSEMBLY_FORMATS.filter((f) => base.includes(f));
    if (next.length === 0) return {};
    sentences.push(`I kept ${spokenList(next)}: a video needs at least one format.`);
    return { formats: next, words: sentences.join(' ') };
  }
  const added = next.filter((f) => !base.includes(f));
  const dropped = base.filter((f) => !next.includes(f));
  if (added.length === 0 && dropped.length === 0) {
    return { formats: next, words: `${next.length === 1 ? 'The video is made' : 'The videos are made'} in ${spokenList(next)}, as before.` };
  }
  if (added.length > 0) sentences.push(`Also made in ${spokenList(added)}.`);
  if (dropped.length > 0) sentences.push(`No ${spokenList(dropped)} any more.`);
  sentences.push(next.length > 1 ? `Each of the ${next.length} formats (${next.join(', ')}) is its own video in Approvals.` : `One video, in ${spokenList(next)}.`);
  return { formats: next, words: sentences.join(' ') };
}
