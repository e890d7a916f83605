'use strict';
/**
 * Secrets of a local `npm start`. No secret has a built-in value (config/env.ts refuses to start without them), so
 * the first local start generates random ones into DATA_DIR/secrets.json (mode 0600) and every later start reuses
 * them: signed file links keep working across restarts. A variable already set in the environment wins and is
 * never written to the file. With NODE_ENV=production or a PUBLIC_URL off this machine nothing is generated:
 * a missing secret stops the start with a message naming it. Every other way of starting (docker compose, NODE_ENV=production, a bare
 * `tsx api/server.ts`) must be given them.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/** What `npm start` generates (config/env.ts MIN_SECRET_LENGTH is the shortest accepted). */
const LOCAL_SECRETS = ['SIGNING_SECRET'];
const MIN_SECRET_LENGTH = 32;
const FILE_NAME = 'secrets.json';
/** Values once built in (config/env.ts refuses them too). */
const PUBLISHED_SECRETS = new Set(['dev-only-signing-secret-change-me']);

class SecretsError extends Error {
  constructor(message) {
    super(message);
    // npm start prints a StartupError's message alone
    this.name = 'StartupError';
  }
}

/** Why this start is not a local one (a reason) or null: NODE_ENV=production, or a PUBLIC_URL off this machine. */
function notLocalReason(env) {
  if (env.NODE_ENV === 'production') return 'NODE_ENV is production';
  if (!env.PUBLIC_URL) return null;
  let host;
  try {
    host = new URL(env.PUBLIC_URL).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return `PUBLIC_URL (${env.PUBLIC_URL}) is not a URL`;
  }
  const local = host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1';
  return local ? null : `PUBLIC_URL (${env.PUBLIC_URL}) is not on this machine`;
}

function generateSecret() {
  return crypto.randomBytes(32).toString('hex');
}

function readSecretsFile(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw new SecretsError(`Could not read ${file} (${err.code ?? err.message}). Fix: make it readable by this user, or delete it to have new secrets generated (links already handed out stop working).`);
  }
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw new SecretsError(`${file} is not a JSON object of secrets. Fix: delete it to have new secrets generated (links already handed out stop working).`);
}

/** Writes the whole file with mode 0600 through a temporary file, so a crash never leaves half a file. */
function writeSecretsFile(file, secrets) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(partial, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(partial, 0o600);
  fs.renameSync(partial, file);
}

/**
 * The secrets for a local start: for each name in `names` not set in `env`, the value kept in
 * `<dataDir>/secrets.json`, generated (crypto.randomBytes(32), hex) and saved there on first use.
 * Returns `{ values, file, generated }`: `values` holds only the names `env` lacked (merge them into the
 * children's env); `generated` names what this call created. A variable set in `env` but shorter than
 * MIN_SECRET_LENGTH is refused with a StartupError naming it.
 */
function ensureLocalSecrets(dataDir, env = process.env, names = LOCAL_SECRETS) {
  const file = path.join(path.resolve(dataDir), FILE_NAME);
  for (const name of names) {
    const given = env[name];
    if (given && PUBLISHED_SECRETS.has(given)) {
      throw new SecretsError(`${name} is the value this project once had built in (public in its history). Fix: unset it to use the one npm start keeps in ${file}, or set it to a random value such as \`openssl rand -hex 32\`.`);
    }
    if (given && given.length < MIN_SECRET_LENGTH) {
      throw new SecretsError(`${name} is too short (${given.length} characters; at least ${MIN_SECRET_LENGTH} needed). Fix: unset it to use the one npm start keeps in ${file}, or set it to a random value such as \`openssl rand -hex 32\`.`);
    }
  }
  const missing = names.filter((name) => !env[name]);
  if (missing.length === 0) return { values: {}, file, generated: [] };
  // generated secrets are for a developer's machine only: a deployment is given its own
  const notLocal = notLocalReason(env);
  if (notLocal) {
    throw new SecretsError(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set, and npm start generates secrets only for a local start (${notLocal}). Fix: set ${missing.join(', ')} to a random value of at least ${MIN_SECRET_LENGTH} characters, e.g. \`openssl rand -hex 32\` (docs/security.md "Secrets").`);
  }
  const stored = readSecretsFile(file) ?? {};
  const values = {};
  const generated = [];
  for (const name of missing) {
    const kept = stored[name];
    if (typeof kept === 'string' && kept.length >= MIN_SECRET_LENGTH) values[name] = kept;
    else {
      values[name] = generateSecret();
      stored[name] = values[name];
      generated.push(name);
    }
  }
  if (generated.length) writeSecretsFile(file, stored);
  else if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600); // readable by others: close it
  return { values, file, generated };
}

/** The Enhance Renders access code npm start keeps beside the secrets: short enough to type, random per machine. */
const ACCESS_CODE_NAME = 'ENHANCE_ACCESS_CODE';

function generateAccessCode() {
  return `BETA-${crypto.randomBytes(5).toString('hex').toUpperCase()}`;
}

/**
 * The Enhance Renders access code for a local start when ENHANCE_ACCESS_CODE is not set: kept in
 * `<dataDir>/secrets.json`, generated on first use. Not a secret in the signing sense (any length is accepted), and
 * never generated for a start that is not local: there an unset code keeps the feature locked for everyone.
 * Returns `{ code, file, generated }`; `code` is null when nothing applies (set in `env`, or not a local start).
 */
function ensureLocalAccessCode(dataDir, env = process.env) {
  const file = path.join(path.resolve(dataDir), FILE_NAME);
  if (env[ACCESS_CODE_NAME] !== undefined || notLocalReason(env)) return { code: null, file, generated: false };
  const stored = readSecretsFile(file) ?? {};
  const kept = stored[ACCESS_CODE_NAME];
  if (typeof kept === 'string' && kept.trim()) return { code: kept, file, generated: false };
  stored[ACCESS_CODE_NAME] = generateAccessCode();
  writeSecretsFile(file, stored);
  return { code: stored[ACCESS_CODE_NAME], file, generated: true };
}

module.exports = { LOCAL_SECRETS, MIN_SECRET_LENGTH, FILE_NAME, ensureLocalSecrets, ensureLocalAccessCode, generateSecret, notLocalReason };
