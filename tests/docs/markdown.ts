/**
 * The project's documentation as links: README.md, CHANGELOG.md and docs/*.md, read the way GitHub renders them
 * (links and images outside code, heading anchors with GitHub's slugs).
 */
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export function documentationFiles(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => path.join(ROOT, 'docs', name));
  return [path.join(ROOT, 'README.md'), path.join(ROOT, 'CHANGELOG.md'), ...docs].filter((file) => fs.existsSync(file));
}

export interface DocLink {
  /** The markdown file, relative to the repository. */
  file: string;
  line: number;
  target: string;
}

/** The text with fenced code blocks blanked (line numbers kept) and inline code spans removed. */
function withoutCode(text: string): string[] {
  return withoutFences(text).map((line) => line.replace(/(`+)[\s\S]*?\1/g, ''));
}

/** Every link and image target of a markdown file: `[text](target)`, `![alt](src)`, `[ref]: target`, `<img src>`. */
export function linksOf(file: string): DocLink[] {
  const lines = withoutCode(fs.readFileSync(file, 'utf8'));
  const links: DocLink[] = [];
  lines.forEach((text, i) => {
    const add = (target: string) => links.push({ file: path.relative(ROOT, file), line: i + 1, target: target.trim() });
    for (const m of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) add(m[1]);
    const reference = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(text);
    if (reference) add(reference[1]);
    for (const m of text.matchAll(/<img\s[^>]*src="([^"]+)"/g)) add(m[1]);
  });
  return links;
}

/** GitHub's anchor of a heading: markup dropped, lower case, punctuation removed, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_~]/g, (c) => (c === '_' ? '_' : ''))
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a markdown file's headings give (a repeated heading gets -1, -2 ...), plus explicit `<a id>`s. */
export function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const raw = fs.readFileSync(file, 'utf8');
  for (const line of withoutFences(raw)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** Lines outside fenced code blanked (line numbers kept), inline code kept (a heading's `code` is part of its anchor). */
function withoutFences(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length) fence = null;
      return '';
    }
    if (marker) {
      fence = marker[1];
      return '';
    }
    return line;
  });
}

/** Addresses the local app answers at (`npm start` prints http://127.0.0.1:3000), for links written as full URLs. */
const LOCAL_APP = /^https?:\/\/(127\.0\.0\.1|localhost):3000(?=\/|$)/;

/**
 * The path and query of a link into the running app or its API (`/api/docs`, `http://127.0.0.1:3000/?view=approvals`),
 * or null for anything else (another site, a file of the repository, an anchor).
 */
export function appPathOf(target: string): string | null {
  if (LOCAL_APP.test(target)) return target.replace(LOCAL_APP, '') || '/';
  if (target.startsWith('/') && !target.startsWith('//')) return target;
  return null;
}
