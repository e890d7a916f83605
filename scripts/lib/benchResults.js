'use strict';
/**
 * Gathering and comparing benchmark results (see bench/support/results.ts for the records each bench writes).
 * A results document: { startedAt, finishedAt, host: { cpus, model, node }, benches: { [bench]: { measures, failed } } }.
 */
const fs = require('node:fs');
const os = require('node:os');

function readRecords(jsonlFile) {
  if (!fs.existsSync(jsonlFile)) return [];
  return fs
    .readFileSync(jsonlFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

function buildDocument(records, failedBenches, startedAt) {
  const benches = {};
  for (const record of records) {
    const entry = (benches[record.bench] ??= { measures: [], failed: false });
    entry.measures.push(...record.measures);
  }
  for (const bench of failedBenches) (benches[bench] ??= { measures: [], failed: true }).failed = true;
  return {
    startedAt,
    finishedAt: new Date().toISOString(),
    host: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? 'unknown', node: process.version, loadavg: os.loadavg() },
    benches,
  };
}

function loadDocument(file) {
  let doc;
  try {
    doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read benchmark results ${file}: ${err.message}`);
  }
  if (!doc || typeof doc.benches !== 'object') throw new Error(`${file} is not a benchmark results file (no "benches")`);
  return doc;
}

/** Rows of { bench, name, kind, unit, better, old, new, changePct, verdict } for every measure present in either document. */
function compareDocuments(oldDoc, newDoc) {
  const rows = [];
  const benchNames = [...new Set([...Object.keys(oldDoc.benches), ...Object.keys(newDoc.benches)])].sort();
  for (const bench of benchNames) {
    const olds = new Map((oldDoc.benches[bench]?.measures ?? []).map((m) => [m.name, m]));
    const news = new Map((newDoc.benches[bench]?.measures ?? []).map((m) => [m.name, m]));
    for (const name of [...new Set([...olds.keys(), ...news.keys()])]) {
      const o = olds.get(name);
      const n = news.get(name);
      const ref = n ?? o;
      let changePct = null;
      let verdict = o && n ? 'same' : o ? 'gone' : 'new';
      if (o && n && o.value !== 0) {
        changePct = ((n.value - o.value) / Math.abs(o.value)) * 100;
        const improved = ref.better === 'higher' ? n.value > o.value : n.value < o.value;
        if (Math.abs(changePct) >= 5) verdict = improved ? 'better' : 'WORSE';
      }
      rows.push({ bench, name, kind: ref.kind, unit: ref.unit, better: ref.better, target: ref.target, old: o?.value ?? null, new: n?.value ?? null, changePct, verdict });
    }
  }
  // ratios first: they are what compares across runs and machines
  return rows.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'ratio' ? -1 : 1));
}

function formatComparison(rows) {
  const fmt = (v, unit) => (v === null ? '-' : unit === 'x' ? `${v.toFixed(2)}x` : `${v.toFixed(1)} ${unit}`);
  const table = rows.map((r) => [
    `${r.bench}.${r.name}`,
    r.kind,
    fmt(r.old, r.unit),
    fmt(r.new, r.unit),
    r.changePct === null ? '' : `${r.changePct >= 0 ? '+' : ''}${r.changePct.toFixed(1)}%`,
    `${r.better} is better`,
    r.verdict,
  ]);
  const header = ['measure', 'kind', 'old', 'new', 'change', '', 'verdict'];
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [line(header), ...table.map(line)].join('\n');
}

module.exports = { readRecords, buildDocument, loadDocument, compareDocuments, formatComparison };
