/**
 * docs/architecture.md keeps up with the code: its diagram shows the parts the issue names, and every workflow in
 * workflows/ has a section of its own (a new workflow without one fails here).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './markdown';

const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');

test('the diagram shows the browser, API, workers, Temporal, PostgreSQL and storage', () => {
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
  for (const part of ['Browser', 'API', 'Worker', 'Temporal', 'PostgreSQL', 'Storage']) expect(diagram).toContain(part);
});

test('every workflow has a section with its file', () => {
  const dir = path.join(ROOT, 'workflows');
  const withWorkflows = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.ts') && /export async function \w+Workflow\(/.test(fs.readFileSync(path.join(dir, name), 'utf8')));
  expect(withWorkflows.length).toBeGreaterThan(5);
  const headings = doc.split('\n').filter((line) => line.startsWith('### '));
  const missing = withWorkflows.filter((name) => !headings.some((h) => h.includes(`\`workflows/${name}\``)));
  expect(missing).toEqual([]);
});
