/**
 * scripts/docs/benchmarks.ts writes the JSON of `npm run bench -- --json` into docs/benchmarks.md's marked section
 * and moves the table it replaces into CHANGELOG.md's benchmark history. Tested on a results document made the way
 * the runner makes one (scripts/lib/benchResults.js), not on a bench run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { figure, ratio } from '../../bench/support/results';
import { BENCHMARKS_DOC, END, START, replaceSection, resultsTable, writeResults, type ResultsDocument } from '../../scripts/docs/benchmarks';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildDocument } = require('../../scripts/lib/benchResults') as { buildDocument: (records: unknown[], failed: string[], startedAt: string) => ResultsDocument };

function results(rps: number, failed: string[] = []): ResultsDocument {
  return buildDocument(
    [
      { bench: 'creditSummary', measures: [figure('http_rps', rps, 'req/s', 'higher', 'HTTP requests per second'), ratio('http_vs_pg', rps / 500, 'higher', 'HTTP over pg | same SQL', 0.5)] },
      { bench: 'upload', measures: [figure('rss_growth', 120.4, 'MB', 'lower', 'API peak RSS growth', 100)] },
    ],
    failed,
    '2030-01-02T03:04:05.000Z',
  );
}

const PAGE = ['# Benchmarks', '', 'Method text.', '', START, END, '', 'After.', ''].join('\n');
const CHANGELOG = ['# Changelog', '', '## A release', '', '- a change', '', '## Benchmark history', '', 'Old prose.', ''].join('\n');

describe('the benchmark table', () => {
  test('has one row per measure, ratios first, targets judged, failed benches named', () => {
    const table = resultsTable(results(1000, ['events']));
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    expect(rows).toEqual([
      '| `creditSummary` | `http_vs_pg` | ratio | 2.00x | ≥ 0.5x met | HTTP over pg \\| same SQL |',
      '| `creditSummary` | `http_rps` | figure | 1000 req/s |  | HTTP requests per second |',
      '| `upload` | `rss_growth` | figure | 120 MB | ≤ 100 MB **missed** | API peak RSS growth |',
    ]);
    expect(table).toContain('Failed in this run (no figures): `events`.');
    expect(table).not.toContain('2030');
  });

  test('says a bench that missed a target but wrote its figures ended so, not that it gave none', () => {
    const table = resultsTable(results(1000, ['upload']));
    expect(table).toContain('Ended with a target missed or an error: `upload` (its rows above).');
    expect(table).not.toContain('no figures');
  });

  test('refuses a file that is not a results document', () => {
    expect(() => resultsTable({} as ResultsDocument)).toThrow(/not a benchmark results document/);
  });

  test('replaces only the marked section, and refuses a page without one', () => {
    const { markdown, previous } = replaceSection(PAGE, 'NEW');
    expect(markdown).toBe(PAGE.replace(`${START}\n${END}`, `${START}\nNEW\n${END}`));
    expect(previous).toBe('');
    expect(() => replaceSection('# Benchmarks\n', 'NEW')).toThrow(/no <!-- bench-results:start -->/);
  });

  test('a second run replaces the table and moves the first one to the changelog history', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-bench-doc-'));
    const files = { benchmarks: path.join(dir, 'benchmarks.md'), changelog: path.join(dir, 'CHANGELOG.md') };
    try {
      fs.writeFileSync(files.benchmarks, PAGE);
      fs.writeFileSync(files.changelog, CHANGELOG);
      expect(writeResults(results(1000), files)).toEqual({ historyAdded: false });
      expect(fs.readFileSync(files.changelog, 'utf8')).toBe(CHANGELOG);

      expect(writeResults(results(1500), files)).toEqual({ historyAdded: true });
      const page = fs.readFileSync(files.benchmarks, 'utf8');
      expect(page).toContain('1500 req/s');
      expect(page).not.toContain('1000 req/s');
      expect(page.startsWith('# Benchmarks\n\nMethod text.\n')).toBe(true);
      expect(page.endsWith(`${END}\n\nAfter.\n`)).toBe(true);

      const changelog = fs.readFileSync(files.changelog, 'utf8');
      const history = changelog.slice(changelog.indexOf('## Benchmark history'));
      expect(history).toMatch(/^## Benchmark history\n\n### Benchmark figures until the run of 2030-01-02\n\n[\s\S]*1000 req\/s[\s\S]*Old prose\./);
      expect(changelog.startsWith('# Changelog\n\n## A release\n\n- a change\n')).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a run of some benches replaces their rows and keeps the other benches\' rows of the current table', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-bench-doc-'));
    const files = { benchmarks: path.join(dir, 'benchmarks.md'), changelog: path.join(dir, 'CHANGELOG.md') };
    try {
      fs.writeFileSync(files.benchmarks, PAGE);
      fs.writeFileSync(files.changelog, CHANGELOG);
      writeResults(results(1000), files);
      const soak = buildDocument([{ bench: 'soak', measures: [figure('read_p99_ms', 120, 'ms', 'lower', 'read p99', 150)] }], [], '2030-01-03T00:00:00.000Z');
      writeResults(soak, files);
      const page = fs.readFileSync(files.benchmarks, 'utf8');
      const rows = page.split('\n').filter((line) => line.startsWith('| `'));
      expect(rows.map((row) => row.split(' | ')[0])).toEqual(['| `creditSummary`', '| `creditSummary`', '| `soak`', '| `upload`']);
      expect(page).toContain('1000 req/s');
      expect(page).toContain('Benches not in that run keep their rows from an earlier one: `creditSummary`, `upload`.');
      // the soak alone again: its row replaced, the kept rows still there once
      writeResults(buildDocument([{ bench: 'soak', measures: [figure('read_p99_ms', 90, 'ms', 'lower', 'read p99', 150)] }], [], '2030-01-04T00:00:00.000Z'), files);
      const again = fs.readFileSync(files.benchmarks, 'utf8');
      expect(again).toContain('| `soak` | `read_p99_ms` | figure | 90.0 ms |');
      expect(again).not.toContain('120 ms');
      expect(again.split('\n').filter((line) => line.startsWith('| `creditSummary`'))).toHaveLength(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('docs/benchmarks.md holds one table written by the script', () => {
    const page = fs.readFileSync(BENCHMARKS_DOC, 'utf8');
    const section = page.slice(page.indexOf(START) + START.length, page.indexOf(END)).trim();
    expect(section).toMatch(/^Measured by `npm run bench -- --json` on /);
    expect(section).toContain('| bench | measure | kind | value | target | what |');
    expect(page.split(START)).toHaveLength(2);
  });
});
