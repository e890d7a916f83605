import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { figure, meetsTarget, ratio } from '../../bench/support/results';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildDocument, compareDocuments, formatComparison } = require('../../scripts/lib/benchResults') as {
  buildDocument: (records: unknown[], failed: string[], startedAt: string) => { benches: Record<string, { measures: unknown[]; failed: boolean }> };
  compareDocuments: (a: unknown, b: unknown) => Array<{ bench: string; name: string; verdict: string; changePct: number | null; kind: string }>;
  formatComparison: (rows: unknown[]) => string;
};

const ROOT = path.resolve(__dirname, '../..');

function doc(values: Record<string, number>, failed: string[] = []) {
  return buildDocument(
    [
      { bench: 'creditSummary', measures: [ratio('http_vs_pg', values.http_vs_pg, 'higher', 'r', 0.5), figure('http_p99', values.http_p99, 'ms', 'lower', 'p99')] },
      { bench: 'upload', measures: [figure('rss_growth', values.rss_growth, 'MB', 'lower', 'rss', 100)] },
    ],
    failed,
    '2026-11-23T00:00:00.000Z',
  );
}

describe('benchmark results', () => {
  it('gathers the records of every bench into one document and marks failed benches', () => {
    const d = doc({ http_vs_pg: 0.4, http_p99: 20, rss_growth: 50 }, ['imageEdit']);
    expect(Object.keys(d.benches).sort()).toEqual(['creditSummary', 'imageEdit', 'upload']);
    expect(d.benches.creditSummary.measures).toHaveLength(2);
    expect(d.benches.imageEdit).toEqual({ measures: [], failed: true });
  });

  it('judges targets in the direction of the measure', () => {
    expect(meetsTarget({ value: 0.6, better: 'higher', target: 0.5 })).toBe(true);
    expect(meetsTarget({ value: 0.4, better: 'higher', target: 0.5 })).toBe(false);
    expect(meetsTarget({ value: 120, better: 'lower', target: 100 })).toBe(false);
    expect(meetsTarget({ value: 1, better: 'lower' })).toBeNull();
  });

  it('compares two runs: a lower ratio whose higher is better is WORSE, a lower latency is better, small changes are the same', () => {
    const rows = compareDocuments(doc({ http_vs_pg: 0.5, http_p99: 20, rss_growth: 50 }), doc({ http_vs_pg: 0.4, http_p99: 10, rss_growth: 51 }));
    const by = Object.fromEntries(rows.map((r) => [`${r.bench}.${r.name}`, r]));
    expect(by['creditSummary.http_vs_pg'].verdict).toBe('WORSE');
    expect(by['creditSummary.http_vs_pg'].changePct).toBeCloseTo(-20);
    expect(by['creditSummary.http_p99'].verdict).toBe('better');
    expect(by['upload.rss_growth'].verdict).toBe('same');
    expect(rows[0].kind).toBe('ratio');
    expect(formatComparison(rows)).toMatch(/creditSummary\.http_vs_pg\s+ratio\s+0\.50x\s+0\.40x\s+-20\.0%/);
  });

  it('npm run bench -- --compare old.json new.json prints the changes without running a bench', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-compare-'));
    try {
      fs.writeFileSync(path.join(dir, 'old.json'), JSON.stringify(doc({ http_vs_pg: 0.5, http_p99: 20, rss_growth: 50 })));
      fs.writeFileSync(path.join(dir, 'new.json'), JSON.stringify(doc({ http_vs_pg: 0.6, http_p99: 20, rss_growth: 50 })));
      const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/bench.js'), '--compare', path.join(dir, 'old.json'), path.join(dir, 'new.json')], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/creditSummary\.http_vs_pg\s+ratio\s+0\.50x\s+0\.60x\s+\+20\.0%.*better/);
      expect(r.stdout).toContain('no ratio worse by 5 % or more');
      const bad = spawnSync(process.execPath, [path.join(ROOT, 'scripts/bench.js'), '--compare', path.join(dir, 'missing.json')], { encoding: 'utf8' });
      expect(bad.status).not.toBe(0);
      expect(bad.stderr).toContain('cannot read benchmark results');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
