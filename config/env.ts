import os from 'node:os';
import { CREDIT_PACKAGES } from '../domain/constants';
/**
 * All configuration comes from the environment, with the documented defaults below.
 * config/variables.ts lists every variable with its default and meaning (docs/configuration.md is generated from it
 * by `npm run docs:config`); a variable read here and missing there fails tests/docs/configuration.test.ts.
 */
export interface AppConfig {
  nodeEnv: string;
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  /**
   * How long a starting worker keeps trying to reach Temporal before it exits (seconds; 0: exits at the first
   * refusal). A worker restarted during a Temporal outage waits instead of crash-looping its supervisor.
   */
  temporalConnectWaitSeconds: number;
  /** Base address of the Temporal Web UI: admins get a link to each run in the Activity view. */
  temporalUiUrl: string;
  /** The trace viewer's address of a trace without its id (TRACE_VIEWER_URL), or null: admins see trace ids only. */
  traceViewerUrl: string | null;
  storageDir: string;
  /** Where stored files live: `local` (STORAGE_DIR on this machine) or `s3` (any S3-compatible object storage). */
  storageBackend: 'local' | 's3';
  s3: S3Config;
  /** Unfinished resumable (tus) uploads are removed this long after they started (TUS_EXPIRATION_HOURS, 24). */
  tusExpirationHours: number;
  /** Unfinished resumable uploads one account may hold at once (TUS_MAX_UNFINISHED_UPLOADS, 10); the next creation answers 429. */
  tusMaxUnfinishedUploads: number;
  /** Bytes one account's unfinished resumable uploads may declare in total (TUS_MAX_UNFINISHED_MB, 1024 MB); beyond, creation answers 413. */
  tusMaxUnfinishedBytes: number;
  /** Enhance Renders draft uploads not registered (add-images, or a dispatch for a reference) are removed this long after they started (DRAFT_UPLOAD_MAX_AGE_MINUTES, 30). */
  draftUploadMaxAgeMinutes: number;
  /** Draft uploads not yet registered one account may hold at once, over all its drafts (DRAFT_UPLOADS_WAITING_PER_ACCOUNT, 20); the next answers 429. */
  draftUploadsWaitingPerAccount: number;
  /** Event streams (GET /api/events) one account may have open at once over all API processes (EVENT_STREAMS_PER_ACCOUNT, 8); the next answers 429. */
  eventStreamsPerAccount: number;
  /** Bytes an event stream may have waiting for a reader that stops reading (EVENT_STREAM_MAX_QUEUED_BYTES, 1048576 = 1 MiB); past them the stream is dropped. */
  eventStreamMaxQueuedBytes: number;
  signingSecret: string;
  /**
   * Key material the authenticator apps' TOTP secrets are encrypted with (TOTP_ENCRYPTION_KEY, at least 32 characters;
   * unset: SIGNING_SECRET). Changing it makes every set-up authenticator app unusable (services/accounts/totpSecrets.ts).
   */
  totpEncryptionKey: string;
  signedUrlTtlSeconds: number;
  sessionTtlDays: number;
  cookieSecure: boolean;
  /**
   * Webhook endpoints may target private, loopback, link-local, unique-local and CGNAT addresses
   * (WEBHOOK_ALLOW_PRIVATE_TARGETS, off): for receivers on the operator's own network. Off, such targets are refused
   * at registration and at every send (services/integrations/webhookTargets.ts).
   */
  webhookAllowPrivateTargets: boolean;
  approvalWindow: string;
  enhanceAccessCode: string;
  providerKind: 'local' | 'fal';
  falBaseUrl: string;
  falApiKey: string;
  falImageEditModel: string;
  falUpscaleModel: string;
  falVideoModel: string;
  /** Enhance Renders' vision prompt on fal: the queue app and the language model it runs. */
  falVisionModel: string;
  falVisionLlm: string;
  /** x264 preset of clips rendered here (local provider) and of watermarked previews. */
  /** Concurrent activities on the media queue per worker process (sharp/ffmpeg work). */
  mediaActivityConcurrency: number;
  /** Concurrent activities on each other queue per worker process (WORKER_ACTIVITY_CONCURRENCY, 100: the SDK's default). */
  workerActivityConcurrency: number;
  /** Workflows each of the worker's queues keeps in its sticky cache (WORKFLOW_CACHE_SIZE); null: the SDK's default, from the heap size. */
  workflowCacheSize: number | null;
  /** a workflow bundle built beforehand (`npm run build:workflows`), loaded instead of bundling at start */
  workflowBundlePath: string | null;
  /** The worker process's PostgreSQL pool (WORKER_DATABASE_POOL_MAX, 10). */
  workerDatabasePoolMax: number;
  /** Hosted (fal) status polls: of a clip, by the clip workflow's timer (FAL_VIDEO_POLL_INTERVAL_MS, 15000), and of an image job (FAL_IMAGE_POLL_INTERVAL_MS, 1000). */
  falVideoPollIntervalMs: number;
  falImagePollIntervalMs: number;
  /**
   * Where fal can reach this API (FAL_WEBHOOK_BASE_URL, e.g. `https://studio.example.com`): hosted jobs are then
   * submitted with a callback to `<base>/api/provider-callbacks/fal?...` and their workflows wait for it, looking at the
   * provider only every FAL_WEBHOOK_FALLBACK_POLL_MS. null: no callbacks, the workflows poll (FAL_VIDEO_POLL_INTERVAL_MS).
   */
  falWebhookBaseUrl: string | null;
  /** fal's webhook signing keys (FAL_WEBHOOK_JWKS_URL). */
  falWebhookJwksUrl: string;
  /** With callbacks: how often a waiting job is looked at anyway, for a callback that never came (FAL_WEBHOOK_FALLBACK_POLL_MS, 5 min). */
  falWebhookFallbackPollMs: number;
  /** Threads of the API process that read and build content listings (services/content/listingReaders.ts); 0: the API thread does. */
  listingReaderThreads: number;
  /** Worker: the image work of jobs (sharp, the local image provider) in a thread of its own (activities/imageThread.ts). */
  imageThread: boolean;
  videoPreset: string;
  /** The assembly chat: 'local' (rule-based, offline) or 'openai' (an OpenAI-compatible chat-completions service). */
  chatProvider: 'local' | 'openai';
  chatBaseUrl: string;
  chatApiKey: string;
  chatModel: string;
  /**
   * STRIPE_SECRET_KEY (empty: no purchases). A test key (`sk_test_` / `rk_test_`) is Stripe's test mode: the app says
   * "Test mode: no real payment" on the Buy area. `npm start` without a key (NODE_ENV not production) sets one of its
   * own for the local test-mode checkout (localStripeFrom).
   */
  stripeSecretKey: string;
  /** STRIPE_WEBHOOK_SECRET: the webhook endpoint's signing secret (empty: the webhook answers 503 and nothing is sold). */
  stripeWebhookSecret: string;
  /** STRIPE_API_BASE: another Stripe API host (empty: api.stripe.com); `npm start` points it at its local test-mode checkout. */
  stripeApiBase: string;
  /** Stripe Price id per credit package id (STRIPE_PRICE_SMALL ...); a package without one is sold with price_data. */
  stripePriceIds: Record<string, string>;
  logLevel: string;
  frontendDist: string;
  /** Bearer token that opens GET /metrics to non-local scrapers (Prometheus); empty: loopback only. */
  metricsToken: string;
  /** Worker: address of the app metrics endpoint and of the Temporal SDK's Prometheus exporter (ports unset: off). */
  workerMetricsHost: string;
  workerMetricsPort: number | null;
  temporalMetricsPort: number | null;
  /** TRUST_PROXY: proxies in front whose X-Forwarded-For is believed (0: off, the socket address is the client's). */
  trustProxyHops: number;
  /** SMTP_URL: where invitation e-mails are sent (nodemailer); empty: not sent, the link is copied instead */
  smtpUrl: string;
  /** SMTP_FROM: the From of those e-mails */
  smtpFrom: string;
  /** SSO_ISSUER_URL and friends: the installation's OpenID Connect provider for "Sign in with <name>" (null: none). */
  sso: SsoProviderConfig | null;
}

/** An OpenID Connect provider people sign in with (authorization code flow with PKCE, state and nonce). */
export interface SsoProviderConfig {
  /** The issuer identifier; its /.well-known/openid-configuration is read at the first sign-in. */
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  /** Shown on the button: "Sign in with <name>". */
  name: string;
}

/** The S3 backend's settings (STORAGE_BACKEND=s3); docs/configuration.md lists them. */
export interface S3Config {
  /** S3 API address as the API and workers reach it; empty: AWS S3 in `region`. */
  endpoint: string;
  /** S3 address as browsers reach it (presigned links); S3_ENDPOINT unless set. */
  publicUrl: string;
  region: string;
  bucketPrefix: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  conditionalPut: 'auto' | 'if-none-match' | 'head-check';
}

/** Shortest accepted secret (SIGNING_SECRET, METRICS_TOKEN): 32 characters (`openssl rand -hex 32` gives 64). */
export const MIN_SECRET_LENGTH = 32;

/**
 * A configuration the process cannot run with. Its message names the variable and the fix; entry points print
 * it alone (no stack) and exit 1 (exitOnConfigError).
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const SET_IT =
  'set it to a random value, e.g. `openssl rand -hex 32` or `node -e "console.log(require(\'crypto\').randomBytes(32).toString(\'hex\'))"` ' +
  '(docker compose: put it in .env, see docs/operations.md "Production-shaped stack").';
/** The secrets `npm start` generates (scripts/lib/secrets.js LOCAL_SECRETS). */
const GENERATED_LOCALLY = new Set(['SIGNING_SECRET']);

function secretFix(name: string): string {
  return GENERATED_LOCALLY.has(name)
    ? `Fix: start with \`npm start\` (it generates one into DATA_DIR/secrets.json on first run and reuses it), or ${SET_IT}`
    : `Fix: ${SET_IT}`;
}

/** Values that were once built in (public in this project's history): never accepted, whatever their length. */
const PUBLISHED_SECRETS = new Set(['dev-only-signing-secret-change-me']);

/** A secret that has no built-in value: missing, short or once published is a ConfigError naming it. */
function requiredSecret(env: NodeJS.ProcessEnv, name: string, purpose: string): string {
  const value = env[name] ?? '';
  if (value === '') throw new ConfigError(`${name} is not set. It ${purpose}; there is no built-in value. ${secretFix(name)}`);
  if (PUBLISHED_SECRETS.has(value)) {
    throw new ConfigError(`${name} is the value this project once had built in (public in its history), so anyone could sign with it. It ${purpose}. ${secretFix(name)}`);
  }
  if (value.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`${name} is too short (${value.length} characters; at least ${MIN_SECRET_LENGTH} needed). It ${purpose}. ${secretFix(name)}`);
  }
  return value;
}

/** A secret that may be unset (its feature stays closed) but, when set, is held to the same rules. */
function optionalSecret(env: NodeJS.ProcessEnv, name: string, purpose: string): string {
  return env[name] ? requiredSecret(env, name, purpose) : '';
}

/**
 * For entry points' last catch: a ConfigError is printed as its message alone and the process exits 1;
 * anything else returns false for the caller to report as it does.
 */
export function exitOnConfigError(err: unknown): boolean {
  if (!(err instanceof ConfigError)) return false;
  process.stderr.write(`Configuration error: ${err.message}\n`);
  process.exit(1);
}

/** The log level alone (the logger is made at import time and must not need the secrets). */
export function logLevelFrom(env: NodeJS.ProcessEnv = process.env): string {
  return env.LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'silent' : 'info');
}

/** The database address alone (migrations need no secrets). */
export function databaseUrlFrom(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/render_studio';
}

function int(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new Error(`Expected a number, got "${value}"`);
  return n;
}

/** A whole number of at least 1, `fallback` when unset or empty. */
function positiveInt(name: string, value: string | undefined, fallback: number): number {
  const n = int(value, fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, got "${value}"`);
  return n;
}

function nonNegativeInt(name: string, value: string | undefined, fallback: number): number {
  const n = int(value, fallback);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of at least 0, got "${value}"`);
  return n;
}

/** A switch: "on" or "off", `fallback` when unset or empty. */
function onOff(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value !== 'on' && value !== 'off') throw new Error(`${name} must be "on" or "off", got "${value}"`);
  return value === 'on';
}

/** LISTING_READER_THREADS: a whole number 0-16; by default one per core, 0 on a single core. */
function readerThreads(value: string | undefined): number {
  const cores = os.availableParallelism();
  const n = int(value, cores > 1 ? Math.min(cores, 4) : 0);
  if (!Number.isInteger(n) || n < 0 || n > 16) throw new Error(`LISTING_READER_THREADS must be a whole number from 0 to 16, got "${value}"`);
  return n;
}

/** A port when set, null when unset or empty (the listener stays off). */
function optionalPort(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  const port = int(value, 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Expected a port number, got "${value}"`);
  return port;
}

/** TRUST_PROXY: "true" is one proxy hop, a whole number that many, "false" or unset none. */
function proxyHops(value: string | undefined): number {
  if (value === undefined || value === '' || value === 'false') return 0;
  if (value === 'true') return 1;
  const hops = Number(value);
  if (!Number.isInteger(hops) || hops < 0) throw new Error(`TRUST_PROXY must be "true", "false" or a number of proxies, got "${value}"`);
  return hops;
}

function storageBackendFrom(env: NodeJS.ProcessEnv): 'local' | 's3' {
  const value = env.STORAGE_BACKEND || 'local';
  if (value !== 'local' && value !== 's3') throw new ConfigError(`STORAGE_BACKEND must be "local" or "s3", got "${value}".`);
  return value;
}

function s3ConfigFrom(env: NodeJS.ProcessEnv, required: boolean): S3Config {
  const endpoint = (env.S3_ENDPOINT ?? '').replace(/\/+$/, '');
  const bucketPrefix = env.S3_BUCKET_PREFIX ?? 'render-studio-';
  // the longest app bucket name is "renders"/"videos"/"images"/"drafts" (7 letters): S3 names are 3 to 63 characters
  if (!/^[a-z0-9][a-z0-9-]{0,55}$/.test(bucketPrefix)) {
    throw new ConfigError(`S3_BUCKET_PREFIX must be lowercase letters, digits and hyphens, starting with a letter or digit, at most 56 characters (S3 bucket naming rules), got "${bucketPrefix}".`);
  }
  const conditionalPut = env.S3_CONDITIONAL_PUT || 'auto';
  if (conditionalPut !== 'auto' && conditionalPut !== 'if-none-match' && conditionalPut !== 'head-check') {
    throw new ConfigError(`S3_CONDITIONAL_PUT must be "auto", "if-none-match" or "head-check", got "${conditionalPut}".`);
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID ?? '';
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? '';
  if (required && (!accessKeyId || !secretAccessKey)) {
    throw new ConfigError('STORAGE_BACKEND=s3 needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (the object storage credentials; they also sign the presigned file links).');
  }
  return {
    endpoint,
    publicUrl: (env.S3_PUBLIC_URL || endpoint).replace(/\/+$/, ''),
    region: env.S3_REGION || 'us-east-1',
    bucketPrefix,
    accessKeyId,
    secretAccessKey,
    // a custom endpoint (SeaweedFS, MinIO) is usually addressed by path; AWS S3 by bucket host name
    forcePathStyle: env.S3_FORCE_PATH_STYLE ? env.S3_FORCE_PATH_STYLE === 'true' : endpoint !== '',
    conditionalPut,
  };
}

/** Stripe Price id per credit package id, from STRIPE_PRICE_<ID> (e.g. STRIPE_PRICE_MEDIUM); a package without one is sold with price_data. */
export function stripePriceIdsFrom(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(
    CREDIT_PACKAGES.flatMap(({ id }) => {
      const price = env[`STRIPE_PRICE_${id.toUpperCase()}`];
      return price ? [[id, price]] : [];
    }),
  );
}

/**
 * `npm start`'s local test-mode checkout (devStripe/main.ts): a Stripe-speaking server beside the app, so a fresh
 * install can buy credits (no real payment) through the same checkout, signed webhook and crediting as production.
 * `npm start` reads this; the API finds the server through STRIPE_API_BASE, STRIPE_SECRET_KEY and
 * STRIPE_WEBHOOK_SECRET, which `npm start` sets for it (a key and secret generated at each start).
 */
export interface LocalStripeConfig {
  /**
   * LOCAL_STRIPE: `on` / `off`. Default: on when STRIPE_SECRET_KEY is unset and NODE_ENV is not `production`; off
   * whenever a key is set (that Stripe is used). `on` with NODE_ENV=production is refused: it would sell credits for
   * no payment.
   */
  enabled: boolean;
  /** LOCAL_STRIPE_PORT: its port (on HOST, like the app); unset or 0: a free port chosen at each start. */
  port: number;
}

export function localStripeFrom(env: NodeJS.ProcessEnv = process.env): LocalStripeConfig {
  const production = env.NODE_ENV === 'production';
  const setting = env.LOCAL_STRIPE ?? '';
  if (setting !== '' && setting !== 'on' && setting !== 'off') throw new ConfigError(`LOCAL_STRIPE must be "on" or "off", got "${setting}".`);
  if (setting === 'on' && production) {
    throw new ConfigError('LOCAL_STRIPE=on is refused with NODE_ENV=production: the local test-mode checkout adds credits without a real payment. Fix: unset LOCAL_STRIPE and set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (docs/configuration.md "Payments").');
  }
  const port = int(env.LOCAL_STRIPE_PORT, 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`LOCAL_STRIPE_PORT must be a port number (0: any free port), got "${env.LOCAL_STRIPE_PORT}".`);
  const enabled = !env.STRIPE_SECRET_KEY && !production && setting !== 'off';
  return { enabled, port };
}

/** Throws ConfigError when SIGNING_SECRET is missing, or a secret (SIGNING_SECRET, METRICS_TOKEN when set) is too short or once published. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const port = int(env.PORT, 3000);
  const host = env.HOST ?? '127.0.0.1';
  const provider = env.AI_PROVIDER ?? 'local';
  if (provider !== 'local' && provider !== 'fal') throw new Error(`AI_PROVIDER must be "local" or "fal", got "${provider}"`);
  const chatProvider = env.CHAT_PROVIDER || 'local';
  if (chatProvider !== 'local' && chatProvider !== 'openai') throw new Error(`CHAT_PROVIDER must be "local" or "openai", got "${chatProvider}"`);
  // no built-in value: a known key would let anyone mint a link to any stored file
  const signingSecret = requiredSecret(env, 'SIGNING_SECRET', 'signs the expiring links to stored files (HMAC key)');
  return {
    nodeEnv: env.NODE_ENV ?? 'development',
    port,
    host,
    publicUrl: env.PUBLIC_URL ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    databaseUrl: databaseUrlFrom(env),
    temporalAddress: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    temporalConnectWaitSeconds: nonNegativeInt('TEMPORAL_CONNECT_WAIT_SECONDS', env.TEMPORAL_CONNECT_WAIT_SECONDS, 300),
    temporalUiUrl: (env.TEMPORAL_UI_URL || 'http://127.0.0.1:8233').replace(/\/+$/, ''),
    traceViewerUrl: env.TRACE_VIEWER_URL?.trim() || null,
    storageDir: env.STORAGE_DIR ?? '.data/storage',
    storageBackend: storageBackendFrom(env),
    s3: s3ConfigFrom(env, storageBackendFrom(env) === 's3'),
    tusExpirationHours: int(env.TUS_EXPIRATION_HOURS, 24),
    tusMaxUnfinishedUploads: positiveInt('TUS_MAX_UNFINISHED_UPLOADS', env.TUS_MAX_UNFINISHED_UPLOADS, 10),
    tusMaxUnfinishedBytes: positiveInt('TUS_MAX_UNFINISHED_MB', env.TUS_MAX_UNFINISHED_MB, 1024) * 1024 * 1024,
    draftUploadMaxAgeMinutes: positiveInt('DRAFT_UPLOAD_MAX_AGE_MINUTES', env.DRAFT_UPLOAD_MAX_AGE_MINUTES, 30),
    draftUploadsWaitingPerAccount: positiveInt('DRAFT_UPLOADS_WAITING_PER_ACCOUNT', env.DRAFT_UPLOADS_WAITING_PER_ACCOUNT, 20),
    signingSecret,
    eventStreamsPerAccount: positiveInt('EVENT_STREAMS_PER_ACCOUNT', env.EVENT_STREAMS_PER_ACCOUNT, 8),
    eventStreamMaxQueuedBytes: positiveInt('EVENT_STREAM_MAX_QUEUED_BYTES', env.EVENT_STREAM_MAX_QUEUED_BYTES, 1024 * 1024),
    signedUrlTtlSeconds: int(env.SIGNED_URL_TTL_SECONDS, 3600),
    sessionTtlDays: int(env.SESSION_TTL_DAYS, 30),
    cookieSecure: env.COOKIE_SECURE === 'true',
    webhookAllowPrivateTargets: onOff('WEBHOOK_ALLOW_PRIVATE_TARGETS', env.WEBHOOK_ALLOW_PRIVATE_TARGETS, false),
    approvalWindow: env.APPROVAL_WINDOW ?? '7 days',
    // no built-in code: unset, Enhance Renders stays locked for everyone (npm start generates one, docs/configuration.md)
    enhanceAccessCode: (env.ENHANCE_ACCESS_CODE ?? '').trim(),
    providerKind: provider,
    // local media work is CPU-bound: about two tasks per core; hosted jobs mostly wait on HTTP
    mediaActivityConcurrency: int(env.MEDIA_ACTIVITY_CONCURRENCY, provider === 'local' ? Math.max(2, os.cpus().length * 2) : 100),
    workerActivityConcurrency: positiveInt('WORKER_ACTIVITY_CONCURRENCY', env.WORKER_ACTIVITY_CONCURRENCY, 100),
    workflowCacheSize: env.WORKFLOW_CACHE_SIZE ? positiveInt('WORKFLOW_CACHE_SIZE', env.WORKFLOW_CACHE_SIZE, 1) : null,
    workflowBundlePath: env.WORKFLOW_BUNDLE_PATH || null,
    workerDatabasePoolMax: positiveInt('WORKER_DATABASE_POOL_MAX', env.WORKER_DATABASE_POOL_MAX, 10),
    falVideoPollIntervalMs: positiveInt('FAL_VIDEO_POLL_INTERVAL_MS', env.FAL_VIDEO_POLL_INTERVAL_MS, 15_000),
    falImagePollIntervalMs: positiveInt('FAL_IMAGE_POLL_INTERVAL_MS', env.FAL_IMAGE_POLL_INTERVAL_MS, 1000),
    falWebhookBaseUrl: env.FAL_WEBHOOK_BASE_URL?.trim().replace(/\/+$/, '') || null,
    falWebhookJwksUrl: env.FAL_WEBHOOK_JWKS_URL?.trim() || 'https://rest.alpha.fal.ai/.well-known/jwks.json',
    falWebhookFallbackPollMs: positiveInt('FAL_WEBHOOK_FALLBACK_POLL_MS', env.FAL_WEBHOOK_FALLBACK_POLL_MS, 5 * 60 * 1000),
    // a listing build is CPU work: one thread per core (the API thread mostly waits), none on a single core
    listingReaderThreads: readerThreads(env.LISTING_READER_THREADS),
    imageThread: onOff('IMAGE_THREAD', env.IMAGE_THREAD, true),
    falBaseUrl: env.FAL_BASE_URL ?? 'https://queue.fal.run',
    falApiKey: env.FAL_KEY ?? '',
    falImageEditModel: env.FAL_IMAGE_EDIT_MODEL ?? 'fal-ai/nano-banana/edit',
    falUpscaleModel: env.FAL_UPSCALE_MODEL ?? 'fal-ai/esrgan',
    falVideoModel: env.FAL_VIDEO_MODEL ?? 'fal-ai/kling-video/v2.1/standard/image-to-video',
    falVisionModel: env.FAL_VISION_MODEL ?? 'fal-ai/any-llm/vision',
    falVisionLlm: env.FAL_VISION_LLM ?? 'google/gemini-flash-1.5',
    videoPreset: env.VIDEO_PRESET ?? 'veryfast',
    chatProvider,
    chatBaseUrl: env.CHAT_BASE_URL || 'https://api.openai.com/v1',
    chatApiKey: env.CHAT_API_KEY ?? '',
    chatModel: env.CHAT_MODEL || 'gpt-4o-mini',
    stripeSecretKey: env.STRIPE_SECRET_KEY ?? '',
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET ?? '',
    stripeApiBase: env.STRIPE_API_BASE ?? '',
    stripePriceIds: stripePriceIdsFrom(env),
    logLevel: logLevelFrom(env),
    frontendDist: env.FRONTEND_DIST ?? 'frontend/dist',
    totpEncryptionKey: optionalSecret(env, 'TOTP_ENCRYPTION_KEY', 'encrypts the secrets of authenticator apps (unset: SIGNING_SECRET)') || signingSecret,
    metricsToken: optionalSecret(env, 'METRICS_TOKEN', 'opens GET /metrics to other hosts as a bearer token (unset: loopback only)'),
    workerMetricsHost: env.WORKER_METRICS_HOST ?? '127.0.0.1',
    workerMetricsPort: optionalPort(env.WORKER_METRICS_PORT),
    temporalMetricsPort: optionalPort(env.TEMPORAL_METRICS_PORT),
    trustProxyHops: proxyHops(env.TRUST_PROXY),
    smtpUrl: (env.SMTP_URL ?? '').trim(),
    smtpFrom: (env.SMTP_FROM ?? '').trim() || 'Render Studio <no-reply@render-studio.local>',
    sso: ssoFrom(env),
  };
}

/** SSO_ISSUER_URL turns installation-level single sign-on on; it then needs SSO_CLIENT_ID and SSO_CLIENT_SECRET. */
export function ssoFrom(env: NodeJS.ProcessEnv): SsoProviderConfig | null {
  const issuerUrl = (env.SSO_ISSUER_URL ?? '').trim();
  if (!issuerUrl) return null;
  let issuer: URL;
  try {
    issuer = new URL(issuerUrl);
  } catch {
    throw new ConfigError(`SSO_ISSUER_URL is not a URL: "${issuerUrl}"`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && loopback)) {
    throw new ConfigError('SSO_ISSUER_URL must be an https:// address (plain http:// only on this machine, for development)');
  }
  const clientId = (env.SSO_CLIENT_ID ?? '').trim();
  const clientSecret = env.SSO_CLIENT_SECRET ?? '';
  if (!clientId || !clientSecret) throw new ConfigError('SSO_ISSUER_URL is set: SSO_CLIENT_ID and SSO_CLIENT_SECRET must be set too');
  return { issuerUrl, clientId, clientSecret, name: (env.SSO_NAME ?? '').trim() || issuer.host };
}
