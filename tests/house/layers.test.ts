/**
 * No upward imports: every .ts/.tsx file of the repository imports only from the folders docs/development.md's
 * Layout table lists in its "may import" column for the file's folder (docs/development.md "Layers"). Imports are
 * read with the TypeScript parser: `import ... from`, `export ... from`, `import x = require()`, `import('...')`,
 * `require('...')` and `import('...')` types. Relative specifiers are resolved to the top-level folder they land in.
 * Workflows and domain/ import no package but Temporal's deterministic ones (no Node built-ins, no I/O).
 * The table and the rules below are compared too, so the table stays the contract.
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const SKIPPED_DIRS = new Set(['node_modules', '.data', '.tools', '.git', 'frontend/dist']);

/** What each top-level folder may import besides itself; the Layout table of docs/development.md says the same. */
const MAY_IMPORT: Record<string, readonly string[] | 'anything'> = {
  domain: [],
  config: ['domain'],
  providers: ['domain', 'config'],
  storage: ['config'],
  db: ['domain', 'config'],
  devStripe: ['domain', 'config'],
  services: ['domain', 'config', 'providers', 'storage', 'db'],
  activities: ['domain', 'config', 'providers', 'storage', 'db', 'services'],
  api: ['domain', 'config', 'providers', 'storage', 'db', 'services'],
  workflows: ['domain'],
  workers: ['domain', 'config', 'providers', 'storage', 'db', 'services', 'activities'],
  scripts: ['domain', 'config', 'providers', 'storage', 'db', 'services', 'activities', 'api'],
  frontend: ['domain'],
  bench: 'anything',
  tests: 'anything',
};

/** Folders a layer may import types from (`import type`, erased at build): proxyActivities and the worker's sinks. */
const TYPES_ONLY: Record<string, readonly string[]> = {
  workflows: ['activities'],
  workers: ['workflows'],
};

/** Single allowances: files under `from` may import what lies under `to`. */
const EXCEPTIONS: ReadonlyArray<{ from: string; to: string; why: string }> = [
  { from: 'db/', to: 'providers/circuitBreaker.ts', why: "the database's breakers are the providers' circuit breaker" },
  { from: 'scripts/docs/', to: 'tests/', why: 'the docs screenshots drive the app with the browser tests\' helpers' },
];

/** Bottom-up order, for the failure message: a higher number is a higher layer. */
const LEVEL: Record<string, number> = {
  domain: 0,
  config: 1,
  providers: 2,
  storage: 2,
  db: 2,
  devStripe: 2,
  services: 3,
  activities: 4,
  api: 4,
  workflows: 5,
  workers: 5,
  scripts: 5,
  bench: 6,
  tests: 6,
};

/** Packages code in workflows/ and domain/ may import: deterministic, no I/O (the workflow bundle runs in Temporal's sandbox). */
const PURE_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];
/** Packages only workflows/ may import besides: Temporal's OpenTelemetry workflow interceptors (workflows/tracingInterceptors.ts), made for the sandbox. */
const WORKFLOW_PACKAGES = ['@temporalio/interceptors-opentelemetry'];
const TEST_PACKAGES = ['@jest/globals'];
const PURE_FOLDERS = new Set(['workflows', 'domain']);
const NODE_BUILTINS = new Set(builtinModules);

interface Import {
  specifier: string;
  line: number;
  typeOnly: boolean;
}

function sourceFiles(dir = ROOT): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const rel = path.relative(ROOT, full).split(path.sep).join('/');
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !SKIPPED_DIRS.has(rel)) found.push(...sourceFiles(full));
    } else if (/\.tsx?$/.test(entry.name) && dir !== ROOT) {
      found.push(rel);
    }
  }
  return found;
}

function allTypeOnly(elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>): boolean {
  return elements.length > 0 && elements.every((element) => element.isTypeOnly);
}

/** Every module specifier the file names, with its line and whether only types come through it. */
function importsOf(fileName: string, text: string): Import[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (literal: ts.Node | undefined, typeOnly: boolean) => {
    if (!literal || !ts.isStringLiteralLike(literal)) return;
    found.push({ specifier: literal.text, line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!bindings && ts.isNamedImports(bindings) && allTypeOnly(bindings.elements)));
      add(node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      add(node.moduleSpecifier, node.isTypeOnly || (!!clause && ts.isNamedExports(clause) && allTypeOnly(clause.elements)));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) add(node.arguments[0], false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** What is wrong with one import of one file, or null. */
function violation(file: string, imp: Import): string | null {
  const layer = file.split('/')[0];
  const at = `${file}:${imp.line} imports '${imp.specifier}'`;
  if (!imp.specifier.startsWith('.')) {
    if (!PURE_FOLDERS.has(layer)) return null;
    const name = packageName(imp.specifier);
    const allowed = [...PURE_PACKAGES, ...(file.endsWith('.test.ts') ? TEST_PACKAGES : []), ...(layer === 'workflows' ? WORKFLOW_PACKAGES : [])];
    if (allowed.includes(name)) return null;
    const what = imp.specifier.startsWith('node:') || NODE_BUILTINS.has(name) ? 'a Node built-in' : 'a package';
    return `${at}: ${what} in ${layer}/, which imports only ${[...PURE_PACKAGES, ...(layer === 'workflows' ? WORKFLOW_PACKAGES : [])].join(', ')} (no Node modules, no I/O)`;
  }
  const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), imp.specifier)).split(path.sep).join('/');
  const targetLayer = target.split('/')[0];
  if (targetLayer === layer || targetLayer === '..') return null;
  const rule = MAY_IMPORT[layer];
  if (rule === 'anything' || rule.includes(targetLayer)) return null;
  if (imp.typeOnly && TYPES_ONLY[layer]?.includes(targetLayer)) return null;
  const excepted = (e: (typeof EXCEPTIONS)[number]) => (e.to.endsWith('/') ? target.startsWith(e.to) : target === e.to.replace(/\.tsx?$/, ''));
  if (EXCEPTIONS.some((e) => file.startsWith(e.from) && excepted(e))) return null;
  const direction =
    !(targetLayer in MAY_IMPORT) ? 'a folder the layers do not know' : LEVEL[targetLayer] > LEVEL[layer] ? 'a layer above it' : LEVEL[targetLayer] === LEVEL[layer] ? 'a sibling layer' : 'a layer it may not use';
  const typesNote = TYPES_ONLY[layer]?.includes(targetLayer) ? ` (types only, with \`import type\`)` : '';
  return `${at}: ${layer}/ imports ${targetLayer}/${typesNote}, ${direction}; ${layer}/ may import ${rule.length ? rule.map((l) => `${l}/`).join(', ') : 'nothing else'}`;
}

const files = sourceFiles();

test('the source folders are read', () => {
  expect(files.length).toBeGreaterThan(500);
  for (const layer of ['api', 'services', 'workflows', 'activities', 'domain', 'frontend', 'tests']) {
    expect(files.some((file) => file.startsWith(`${layer}/`))).toBe(true);
  }
  expect(files.some((file) => file.startsWith('frontend/dist/') || file.includes('node_modules/'))).toBe(false);
});

test('every folder with source files is placed in the layers', () => {
  const folders = [...new Set(files.map((file) => file.split('/')[0]))];
  expect(folders.filter((folder) => !(folder in MAY_IMPORT))).toEqual([]);
});

test('nothing imports upward: each file imports only what its layer may import', () => {
  const problems: string[] = [];
  for (const file of files) {
    for (const imp of importsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
      const problem = violation(file, imp);
      if (problem) problems.push(problem);
    }
  }
  if (problems.length) throw new Error(`${problems.length} import(s) against the layers (docs/development.md "Layers"):\n${problems.join('\n')}`);
});

test('the reader sees every kind of import', () => {
  const text = [
    "import a from '../a';",
    "import type { B } from '../b';",
    "import { type C } from '../c';",
    "export * from '../d';",
    "export type { E } from '../e';",
    "const f = require('../f');",
    "const g = import('../g');",
    "type H = import('../h').H;",
    "import i = require('../i');",
    "import '../j';",
  ].join('\n');
  expect(importsOf('x.ts', text)).toEqual([
    { specifier: '../a', line: 1, typeOnly: false },
    { specifier: '../b', line: 2, typeOnly: true },
    { specifier: '../c', line: 3, typeOnly: true },
    { specifier: '../d', line: 4, typeOnly: false },
    { specifier: '../e', line: 5, typeOnly: true },
    { specifier: '../f', line: 6, typeOnly: false },
    { specifier: '../g', line: 7, typeOnly: false },
    { specifier: '../h', line: 8, typeOnly: true },
    { specifier: '../i', line: 9, typeOnly: false },
    { specifier: '../j', line: 10, typeOnly: false },
  ]);
});

test('docs/development.md lists for each folder what these rules allow', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'development.md'), 'utf8');
  const layout = doc.slice(doc.indexOf('## Layout'), doc.indexOf('\n## ', doc.indexOf('## Layout') + 1));
  const rows = layout.split('\n').filter((line) => /^\| `[^`]+\/` \|/.test(line));
  const documented = new Map<string, string>();
  let previous = '';
  for (const row of rows) {
    const cells = row.split('|').map((cell) => cell.trim());
    const layer = /^`([^/`]+)\//.exec(cells[1])![1];
    const mayImport = cells[cells.length - 2];
    const tokens = mayImport === 'the same' ? previous : mayImport === 'anything' ? 'anything' : [...mayImport.matchAll(/`([A-Za-z]+)\/`/g)].map((m) => m[1]).filter((l) => l !== layer).sort().join(' ');
    previous = tokens;
    const earlier = documented.get(layer);
    if (earlier !== undefined && earlier !== tokens) throw new Error(`docs/development.md: the rows of ${layer}/ disagree on what it may import`);
    documented.set(layer, tokens);
  }
  const expected = new Map<string, string>();
  for (const [layer, rule] of Object.entries(MAY_IMPORT)) {
    if (rule === 'anything') {
      expected.set(layer, 'anything');
      continue;
    }
    const extra = [...(TYPES_ONLY[layer] ?? []), ...EXCEPTIONS.filter((e) => e.from.startsWith(`${layer}/`) && /^[A-Za-z]+\/$/.test(e.to)).map((e) => e.to.slice(0, -1))];
    expected.set(layer, [...new Set([...rule, ...extra])].sort().join(' '));
  }
  expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(expected));
});
