#!/usr/bin/env node
'use strict';
/**
 * `node scripts/profileTop.js <file.cpuprofile> [count]`: the top frames of a V8 CPU profile (Node's --cpu-prof) by
 * self time and by total (inclusive) time, with their share of the sampled time, so a README can say where time goes.
 */
const fs = require('node:fs');
const path = require('node:path');

function summarise(file, count) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfSamples = new Map();
  for (const id of profile.samples) selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const label = (n) => {
    const f = n.callFrame;
    const url = f.url ? path.relative(process.cwd(), f.url.replace(/^file:\/\//, '')) : '';
    return `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
  };
  const self = new Map();
  const inclusive = new Map();
  for (const [id, samples] of selfSamples) {
    const key = label(nodes.get(id));
    self.set(key, (self.get(key) ?? 0) + samples);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = label(nodes.get(cur));
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + samples);
    }
  }
  const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, count).map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
  return [
    `${file}: ${total} samples, ${(((profile.endTime - profile.startTime) / 1e6)).toFixed(1)} s, idle ${((100 * idle) / total).toFixed(1)}%`,
    'self time:',
    ...top(self),
    'total time:',
    ...top(new Map([...inclusive].filter(([k]) => !k.startsWith('(root)')))),
  ].join('\n');
}

const [file, count] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node scripts/profileTop.js <file.cpuprofile> [count]\n');
  process.exit(2);
}
process.stdout.write(`${summarise(file, Number(count ?? 25))}\n`);
