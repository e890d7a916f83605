/**
 * `npm run docs:screenshots`: builds the front end, then takes the README's screenshots (docs/images/*.webp) in
 * Chromium from the real app, started as the browser tests start it (scripts/docs/screenshots.shoot.ts under jest:
 * its global set-up brings PostgreSQL, Temporal and the workflow bundle). Needs what `npm test` needs; CHROMIUM_PATH
 * names another Chromium than /usr/bin/chromium.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, STORAGE_BACKEND: process.env.STORAGE_BACKEND ?? 'local' } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run(bin('vite'), ['build', '--config', 'frontend/vite.config.ts', '--logLevel', 'warn']);
run(bin('jest'), ['--ci', '--runInBand', '--testMatch', '<rootDir>/scripts/docs/screenshots.shoot.ts', '--', 'scripts/docs/screenshots.shoot.ts']);
process.stdout.write('docs/images/ written: project.webp, approvals.webp, video-assembly.webp\n');
