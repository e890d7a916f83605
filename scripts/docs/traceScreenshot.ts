/**
 * `npm run docs:trace-screenshot`: docs/images/trace-image-edit.png, one AI image edit's trace as the trace viewer of
 * `npm run traces` (Phoenix) shows it, taken in Chromium (scripts/docs/traceScreenshot.shoot.ts under jest: its global
 * set-up brings PostgreSQL, Temporal and the workflow bundle). Installs Phoenix on first use (a few minutes);
 * CHROMIUM_PATH names another Chromium than /usr/bin/chromium.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const jest = path.join(ROOT, 'node_modules', '.bin', 'jest');
const shoot = '<rootDir>/scripts/docs/traceScreenshot.shoot.ts';
const result = spawnSync(jest, ['--ci', '--runInBand', '--testMatch', shoot, '--', 'scripts/docs/traceScreenshot.shoot.ts'], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, STORAGE_BACKEND: process.env.STORAGE_BACKEND ?? 'local' },
});
if (result.status !== 0) process.exit(result.status ?? 1);
process.stdout.write('docs/images/trace-image-edit.png written\n');
