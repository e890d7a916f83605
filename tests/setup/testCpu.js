#!/usr/bin/env node
'use strict';
/**
 * Sums up a TEST_CPU_LOG (tests/setup/testEnvironment.js): the files that cost the jest workers the most CPU, and the
 * totals by folder. Usage: TEST_CPU_LOG=/tmp/cpu.jsonl npm test; node tests/setup/testCpu.js /tmp/cpu.jsonl [top]
 */
const fs = require('node:fs');

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node tests/setup/testCpu.js TEST_CPU_LOG_FILE [top]\n');
  process.exit(2);
}
const rows = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
const cpu = (r) => r.ownCpuS + r.childCpuS;
const total = rows.reduce((sum, r) => sum + cpu(r), 0);
const fixed = (n) => n.toFixed(1).padStart(8);
process.stdout.write(`${rows.length} files, ${total.toFixed(0)} CPU-s in the jest workers and their ended children\n\n`);
process.stdout.write(`${'cpu s'.padStart(8)}${'own'.padStart(8)}${'child'.padStart(8)}${'wall s'.padStart(8)}  file\n`);
for (const r of [...rows].sort((a, b) => cpu(b) - cpu(a)).slice(0, Number(topArg ?? 40))) {
  process.stdout.write(`${fixed(cpu(r))}${fixed(r.ownCpuS)}${fixed(r.childCpuS)}${fixed(r.wallS)}  ${r.file}\n`);
}
const folders = new Map();
for (const r of rows) {
  const folder = r.file.split('/').slice(0, -1).join('/');
  const f = folders.get(folder) ?? { cpu: 0, files: 0 };
  f.cpu += cpu(r);
  f.files += 1;
  folders.set(folder, f);
}
process.stdout.write(`\n${'cpu s'.padStart(8)}${'files'.padStart(7)}  folder\n`);
for (const [folder, f] of [...folders].sort((a, b) => b[1].cpu - a[1].cpu)) {
  process.stdout.write(`${fixed(f.cpu)}${String(f.files).padStart(7)}  ${folder}\n`);
}
