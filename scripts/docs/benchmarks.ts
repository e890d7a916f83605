/**
 * `npm run docs:bench -- <results.json>`: writes the figures of a `npm run bench -- --json <results.json>` run into
 * docs/benchmarks.md, between its `<!-- bench-results:start -->` and `<!-- bench-results:end -->` markers, as one
 * table (the rest of the page is kept as it is). The table it replaces moves to CHANGELOG.md under "Benchmark
 * history", so superseded figures stay in the history and the page shows only the current ones. A results file of
 * some benches (`npm run bench -- soak --json soak.json`: a long run of its own) replaces those benches' rows and
 * keeps the other benches' rows of the current table.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
export const BENCHMARKS_DOC = path.join(ROOT, 'docs', 'benchmarks.md');
export const CHANGELOG = path.join(ROOT, 'CHANGELOG.md');
export const START = '<!-- bench-results:start -->';
export const END = '<!-- bench-results:end -->';
const HISTORY_HEADING = '## Benchmark history';

interface Measure {
  name: string;
  value: number;
  unit: string;
  better: 'higher' | 'lower';
  target?: number;
  kind: 'ratio' | 'figure';
  description?: string;
}

/** What scripts/lib/benchResults.js buildDocument writes. */
export interface ResultsDocument {
  startedAt?: string;
  finishedAt?: string;
  host?: { cpus?: number; model?: string; node?: string };
  benches: Record<string, { measures: Measure[]; failed: boolean }>;
}

function value(m: Measure): string {
  if (m.unit === 'x') return `${m.value.toFixed(2)}x`;
  const digits = Math.abs(m.value) >= 100 ? 0 : Math.abs(m.value) >= 10 ? 1 : 2;
  return `${m.value.toFixed(digits)} ${m.unit}`;
}

function target(m: Measure): string {
  if (m.target === undefined) return '';
  const sign = m.better === 'higher' ? '≥' : '≤';
  const met = m.better === 'higher' ? m.value >= m.target : m.value <= m.target;
  return `${sign} ${m.unit === 'x' ? `${m.target}x` : `${m.target} ${m.unit}`} ${met ? 'met' : '**missed**'}`;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The marked section's content for a results document: the machine, then one row per measure, ratios first. */
export function resultsTable(doc: ResultsDocument): string {
  if (!doc || typeof doc.benches !== 'object') throw new Error('not a benchmark results document (no "benches")');
  const host = doc.host ?? {};
  const lines = [
    `Measured by \`npm run bench -- --json\` on ${host.cpus ?? '?'} × ${host.model ?? 'unknown CPU'}, Node ${host.node ?? '?'}. Ratios compare across machines; figures only on the same one.`,
    '',
    '| bench | measure | kind | value | target | what |',
    '|---|---|---|---|---|---|',
  ];
  const failed: string[] = [];
  for (const bench of Object.keys(doc.benches).sort()) {
    const { measures, failed: didFail } = doc.benches[bench];
    if (didFail) failed.push(bench);
    const ordered = [...measures].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'ratio' ? -1 : 1));
    for (const m of ordered) lines.push(`| \`${bench}\` | \`${m.name}\` | ${m.kind} | ${value(m)} | ${target(m)} | ${cell(m.description ?? '')} |`);
  }
  if (failed.length) {
    const named = (benches: string[]) => benches.map((b) => `\`${b}\``).join(', ');
    const withRows = failed.filter((b) => doc.benches[b].measures.length > 0);
    const without = failed.filter((b) => doc.benches[b].measures.length === 0);
    // a bench exits non-zero when a target is missed, with its figures written: only one without rows gave none
    if (withRows.length) lines.push('', `Ended with a target missed or an error: ${named(withRows)} (its rows above).`);
    if (without.length) lines.push('', `Failed in this run (no figures): ${named(without)}.`);
  }
  return lines.join('\n');
}

const ROW = /^\| `([^`]+)` \|/;

/**
 * `table` (resultsTable of a run) with the rows of `previous` (the section it replaces) for the benches that run did
 * not have, each bench's rows together, benches in name order; the note under the header says rows were kept.
 */
export function keepOtherBenches(table: string, previous: string, doc: ResultsDocument): string {
  const kept = previous.split('\n').filter((line) => {
    const m = ROW.exec(line);
    return m !== null && !(m[1] in doc.benches);
  });
  if (kept.length === 0) return table;
  const lines = table.split('\n');
  const rows = [...lines.filter((line) => ROW.test(line)), ...kept];
  const byBench = new Map<string, string[]>();
  for (const row of rows) {
    const bench = ROW.exec(row)![1];
    byBench.set(bench, [...(byBench.get(bench) ?? []), row]);
  }
  const head = lines.slice(0, lines.findIndex((line) => line.startsWith('|---')) + 1);
  head[0] = `${head[0]} Benches not in that run keep their rows from an earlier one: ${[...new Set(kept.map((row) => `\`${ROW.exec(row)![1]}\``))].join(', ')}.`;
  const tail = lines.slice(lines.findIndex((line) => line.startsWith('|---')) + 1).filter((line) => !ROW.test(line));
  return [...head, ...[...byBench.keys()].sort().flatMap((bench) => byBench.get(bench)!), ...tail].join('\n');
}

/** `doc` with the marked section replaced by `section`, and the section it held. */
export function replaceSection(markdown: string, section: string): { markdown: string; previous: string } {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/benchmarks.md has no ${START} ... ${END} section to write the results into`);
  const previous = markdown.slice(start + START.length, end).trim();
  return { markdown: `${markdown.slice(0, start + START.length)}\n${section}\n${markdown.slice(end)}`, previous };
}

/** The changelog with `table` (the superseded figures) first under its benchmark history heading. */
export function addToHistory(changelog: string, table: string, label: string): string {
  const entry = `### Benchmark figures until ${label}\n\n${table}\n`;
  const at = changelog.indexOf(HISTORY_HEADING);
  if (at < 0) return `${changelog.replace(/\n*$/, '\n')}\n${HISTORY_HEADING}\n\n${entry}`;
  const lineEnd = changelog.indexOf('\n', at);
  const head = lineEnd < 0 ? `${changelog}\n` : changelog.slice(0, lineEnd + 1);
  const rest = lineEnd < 0 ? '' : changelog.slice(lineEnd + 1).replace(/^\n+/, '');
  return `${head}\n${entry}\n${rest}`;
}

/** Writes the results into the doc (and the replaced table into the changelog); returns what changed. */
export function writeResults(doc: ResultsDocument, files = { benchmarks: BENCHMARKS_DOC, changelog: CHANGELOG }): { historyAdded: boolean } {
  const current = fs.readFileSync(files.benchmarks, 'utf8');
  const { previous: before } = replaceSection(current, '');
  const { markdown, previous } = replaceSection(current, keepOtherBenches(resultsTable(doc), before, doc));
  const historyAdded = previous.includes('| bench |');
  if (historyAdded) {
    const label = (doc.startedAt ?? new Date().toISOString()).slice(0, 10);
    fs.writeFileSync(files.changelog, addToHistory(fs.readFileSync(files.changelog, 'utf8'), previous, `the run of ${label}`));
  }
  fs.writeFileSync(files.benchmarks, markdown);
  return { historyAdded };
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('Usage: npm run docs:bench -- <results.json>   (made by npm run bench -- --json <results.json>)\n');
    process.exit(2);
  }
  const { historyAdded } = writeResults(JSON.parse(fs.readFileSync(file, 'utf8')) as ResultsDocument);
  process.stdout.write(`docs/benchmarks.md written from ${file}${historyAdded ? '; the table it replaced is in CHANGELOG.md "Benchmark history"' : ''}\n`);
}
