/**
 * docs/configuration.md and the environment schema (config/variables.ts) cannot drift: the doc is what
 * `npm run docs:config` writes, every variable the code reads is in the schema (and every one in it is read), and
 * the defaults the schema gives for loadConfig's settings are the ones loadConfig applies.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../config/env';
import { ENV_SECTIONS, INTERNAL_VARIABLES } from '../../config/variables';
import { CREDIT_PACKAGES } from '../../domain/constants';
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../scripts/docs/configuration';

const ROOT = path.resolve(__dirname, '..', '..');
/** Where variables are read: the application, its scripts, the test set-up and docker compose (bench/ has its own BENCH_* set). */
const SOURCES = ['api', 'config', 'db', 'domain', 'services', 'workers', 'activities', 'workflows', 'providers', 'storage', 'devStripe', 'scripts', 'tests/setup', 'tests/support', 'frontend/vite.config.ts', 'docker-compose.yml'];
const CODE = /\.(ts|tsx|js|mjs|cjs)$/;

function files(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!fs.existsSync(full)) return [];
  if (fs.statSync(full).isFile()) return [full];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((d) => (d.name === 'node_modules' || d.name === 'dist' ? [] : files(path.join(entry, d.name))));
}

/** Variable names the file reads: `env.NAME`, `env['NAME']`, `(env, 'NAME'` (the secret readers), compose's `${NAME}`. */
function namesRead(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const patterns = file.endsWith('.yml') ? [/\$\{([A-Z][A-Z0-9_]+)/g] : [/\benv\??\.([A-Z][A-Z0-9_]+)/g, /\benv\[['"`]([A-Z][A-Z0-9_]+)['"`]\]/g, /\(\s*env\s*,\s*'([A-Z][A-Z0-9_]+)'/g];
  return patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1]));
}

function readInCode(): Map<string, string[]> {
  const where = new Map<string, string[]>();
  const add = (name: string, file: string) => where.set(name, [...(where.get(name) ?? []), file]);
  for (const file of SOURCES.flatMap(files).filter((f) => CODE.test(f) || f.endsWith('.yml'))) {
    for (const name of namesRead(file)) if (!name.startsWith('BENCH_')) add(name, path.relative(ROOT, file));
  }
  // config/env.ts reads one STRIPE_PRICE_<ID> per credit package, by a template
  for (const { id } of CREDIT_PACKAGES) add(`STRIPE_PRICE_${id.toUpperCase()}`, 'config/env.ts');
  return where;
}

const documented = ENV_SECTIONS.flatMap((s) => s.variables.flatMap((v) => v.names));

describe('docs/configuration.md', () => {
  test('is what npm run docs:config writes from config/variables.ts', () => {
    const current = fs.readFileSync(CONFIGURATION_DOC, 'utf8');
    // a plain equality shows the first differing line; the hint says how to fix it
    if (current !== renderConfigurationDoc()) {
      expect({ doc: current, fix: 'edit config/variables.ts, then npm run docs:config' }).toEqual({ doc: renderConfigurationDoc(), fix: 'edit config/variables.ts, then npm run docs:config' });
    }
  });

  test('every variable the code reads is in the schema', () => {
    const known = new Set([...documented, ...INTERNAL_VARIABLES]);
    const missing = [...readInCode()].filter(([name]) => !known.has(name)).map(([name, where]) => `${name} (read in ${[...new Set(where)].join(', ')})`);
    expect(missing).toEqual([]);
  });

  test('every variable in the schema is read somewhere, and listed once', () => {
    const read = readInCode();
    expect(documented.filter((name) => !read.has(name))).toEqual([]);
    expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
  });

  test("the schema's defaults are loadConfig's", () => {
    const config = loadConfig({ SIGNING_SECRET: 'x'.repeat(40) });
    const drift = ENV_SECTIONS.flatMap((s) => s.variables)
      .filter((v) => v.loaded)
      .map((v) => ({ variable: v.names.join(' / '), documented: v.loaded!.is, loaded: v.loaded!.value(config) }))
      .filter((row) => JSON.stringify(row.documented) !== JSON.stringify(row.loaded));
    expect(drift).toEqual([]);
  });
});
