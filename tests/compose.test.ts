import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

interface ComposeService {
  image?: string;
  entrypoint?: string | string[];
  volumes?: string[];
  build?: unknown;
  command?: string | string[];
  container_name?: string;
  ports?: unknown[];
  environment?: Record<string, string | number | boolean> | string[];
  env_file?: string | Array<string | { path: string; required?: boolean }>;
  depends_on?: string[] | Record<string, { condition?: string }>;
  deploy?: { replicas?: number | string };
  healthcheck?: { test?: string | string[]; start_period?: string };
}

interface ComposeFile {
  services: Record<string, ComposeService>;
}

const ROOT = path.resolve(__dirname, '..');
// docker compose accepts YAML merge keys (<<), so parse with them on
const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
const services = compose.services;

function dependencies(service: ComposeService): string[] {
  const deps = service.depends_on ?? [];
  return Array.isArray(deps) ? deps : Object.keys(deps);
}

function environment(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((entry) => entry.split(/=(.*)/s).slice(0, 2) as [string, string]));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

function commandOf(service: ComposeService): string {
  return Array.isArray(service.command) ? service.command.join(' ') : (service.command ?? '');
}

describe('docker-compose.yml', () => {
  it('has PostgreSQL, the Temporal server with its admin-tools schema set-up, the Temporal UI, the API and workers', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgresql', 'temporal-admin-tools', 'temporal', 'temporal-ui', 'api', 'worker']),
    );
    expect(services.postgresql.image).toBe('postgres:16');
    expect(services.temporal.image).toMatch(/^temporalio\/server:/);
    expect(services['temporal-admin-tools'].image).toMatch(/^temporalio\/admin-tools:/);
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
  });

  it('never uses the deprecated auto-setup image', () => {
    for (const [name, service] of Object.entries(services)) {
      expect({ name, image: service.image ?? '' }).not.toEqual({ name, image: expect.stringMatching(/auto-setup/) });
    }
  });

  it('sets up Temporal schema in PostgreSQL before the server starts, and the server persists to PostgreSQL', () => {
    const setup = commandOf(services['temporal-admin-tools']);
    expect(setup).toContain('temporal-sql-tool --plugin postgres12 --ep postgresql');
    expect(setup).toContain('setup-schema');
    expect(setup).toContain('update-schema');
    expect(services['temporal-admin-tools'].depends_on).toMatchObject({ postgresql: { condition: 'service_healthy' } });
    expect(services.temporal.depends_on).toMatchObject({ 'temporal-admin-tools': { condition: 'service_completed_successfully' } });
    expect(environment(services.temporal)).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
  });

  it('builds the API and worker from the root Dockerfile and runs them with node --import tsx (signals reach node itself)', () => {
    expect(services.api.build).toBe('.');
    expect(services.worker.build).toBe('.');
    expect(commandOf(services.api)).toBe('node --import tsx api/server.ts');
    expect(commandOf(services.worker)).toBe('node --import tsx workers/main.ts');
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20-bookworm-slim\b/m);
    expect(dockerfile).toMatch(/apt-get install[^\n]*ffmpeg/);
    expect(dockerfile).toMatch(/npm ci/);
    expect(dockerfile).toMatch(/^CMD \["node", "--import", "tsx", "api\/server.ts"\]/m);
  });

  it.each(['api', 'worker'])('%s depends on PostgreSQL and Temporal and is wired to both by env', (name) => {
    const service = services[name];
    expect(dependencies(service)).toEqual(expect.arrayContaining(['postgresql', 'temporal']));
    const env = environment(service);
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgresql:5432\//);
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('lets the worker scale: replicas, no fixed container name, no published ports', () => {
    const worker = services.worker;
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports ?? []).toEqual([]);
    expect(worker.deploy?.replicas).toBeDefined();
  });

  describe('object storage', () => {
    const s3 = services.seaweedfs;

    it('runs SeaweedFS with its S3 gateway and a healthcheck on it, data in a volume of its own, published for presigned links', () => {
      expect(s3.image).toMatch(/^chrislusf\/seaweedfs:/);
      expect(commandOf(s3)).toMatch(/exec weed server .*-s3 -s3\.port=8333 -s3\.config=\/tmp\/s3-identities\.json/s);
      const check = Array.isArray(s3.healthcheck?.test) ? s3.healthcheck.test.join(' ') : (s3.healthcheck?.test ?? '');
      expect(check).toContain('http://127.0.0.1:8333/healthz');
      expect(s3.volumes).toEqual(['object-data:/data']);
      expect(s3.ports).toEqual(['${S3_PORT:-8333}:8333']);
      // the identity it accepts is the one the app signs with
      expect(environment(s3).S3_ACCESS_KEY_ID).toBe(environment(services.api).S3_ACCESS_KEY_ID);
      expect(environment(s3).S3_SECRET_ACCESS_KEY).toBe(environment(services.api).S3_SECRET_ACCESS_KEY);
    });

    it.each(['api', 'worker', 'migrate'])('%s stores files in it (STORAGE_BACKEND=s3, its endpoint), never on a volume', (name) => {
      const env = environment(services[name]);
      expect(env).toMatchObject({ STORAGE_BACKEND: 's3', S3_ENDPOINT: 'http://seaweedfs:8333', S3_FORCE_PATH_STYLE: 'true' });
      expect(env.S3_PUBLIC_URL).toBe('${S3_PUBLIC_URL:-http://localhost:8333}');
      expect(env.STORAGE_DIR).toBeUndefined();
      expect(services[name].volumes ?? []).toEqual([]);
    });

    it.each(['api', 'worker'])('%s waits for it to be healthy', (name) => {
      expect(services[name].depends_on).toMatchObject({ seaweedfs: { condition: 'service_healthy' } });
    });

    it('gives API and workers no volume in common: they share only PostgreSQL, Temporal and the object storage', () => {
      const mounts = (name: string) => (services[name].volumes ?? []).map((v) => v.split(':')[0]);
      expect(mounts('api').filter((v) => mounts('worker').includes(v))).toEqual([]);
      const shared = dependencies(services.api).filter((d) => dependencies(services.worker).includes(d));
      // (one-shot set-up services and the trace viewer, which holds no state of theirs, aside)
      expect(shared.filter((d) => !['migrate', 'temporal-create-namespace', 'jaeger'].includes(d)).sort()).toEqual(['postgresql', 'seaweedfs', 'temporal']);
    });

    it('documents scaling workers in the README', () => {
      expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain('docker compose up --scale worker=3');
    });
  });

  it('marks the API healthy only when /health/ready answers (PostgreSQL, Temporal namespace, storage)', () => {
    const test = services.api.healthcheck?.test;
    const command = Array.isArray(test) ? test.join(' ') : (test ?? '');
    expect(command).toContain('http://127.0.0.1:3000/health/ready');
    expect(command).toContain('r.ok');
    expect(services.api.healthcheck?.start_period).toBeDefined();
  });

  it('puts the balancer (haproxy, one hop) in front of the API, which believes the one X-Forwarded-For entry it appends', () => {
    expect(environment(services.api).TRUST_PROXY).toBe('${TRUST_PROXY:-1}');
    expect(services.api.ports ?? []).toEqual([]);
    expect(services.balancer.image).toMatch(/^haproxy:/);
  });

  describe('secrets from .env', () => {
    const composeText = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    /** Every variable compose refuses to run without (`${VAR:?message}`), with its message. */
    const required = new Map([...composeText.matchAll(/\$\{([A-Z0-9_]+):\?([^}]*)\}/g)].map((m) => [m[1], m[2]]));
    const example = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    const exampleValues = new Map(
      example
        .split('\n')
        .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line.trim()))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1], m[2]]),
    );

    it('requires the secrets, each with a message naming it and .env, and gives none a default', () => {
      expect([...required.keys()].sort()).toEqual(['METRICS_TOKEN', 'POSTGRES_PASSWORD', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'SIGNING_SECRET']);
      for (const [name, message] of required) expect(message).toMatch(new RegExp(`^set ${name} in \\.env \\(cp \\.env\\.example \\.env; openssl rand -hex 32\\)`));
      expect(composeText).not.toMatch(/\$\{(SIGNING_SECRET|POSTGRES_PASSWORD|METRICS_TOKEN|S3_ACCESS_KEY_ID|S3_SECRET_ACCESS_KEY):?-/);
      expect(composeText).not.toContain('render-studio}');
    });

    it.each(['migrate', 'api', 'worker'])('%s loads .env as its env_file', (name) => {
      const files = services[name].env_file;
      const list = Array.isArray(files) ? files : [files];
      expect(list.map((f) => (typeof f === 'string' ? f : f?.path))).toContain('.env');
    });

    it('has .env.example with every variable compose requires, all empty (no real values), and keeps .env out of git and images', () => {
      for (const name of required.keys()) expect(exampleValues.get(name)).toBe('');
      for (const [name, value] of exampleValues) expect({ name, value }).toEqual({ name, value: '' });
      expect(example).toContain('openssl rand -hex 32');
      for (const ignore of ['.gitignore', '.dockerignore']) {
        expect(fs.readFileSync(path.join(ROOT, ignore), 'utf8').split('\n')).toContain('.env');
      }
    });

    it('is explained in the docs: copying the example, generating values, rotating SIGNING_SECRET', () => {
      const operations = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
      const security = fs.readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8');
      expect(operations).toContain('cp .env.example .env');
      expect(operations).toContain('openssl rand -hex 32');
      expect(security).toContain('**Rotating `SIGNING_SECRET`**');
    });
  });

  describe('traces (Jaeger)', () => {
    const jaeger = services.jaeger;

    it('runs the Jaeger all-in-one image with OTLP on, its UI on 127.0.0.1 only and its OTLP port unpublished', () => {
      expect(jaeger.image).toMatch(/^jaegertracing\/all-in-one:\$\{JAEGER_VERSION:-\d+\.\d+\.\d+\}$/);
      expect(environment(jaeger).COLLECTOR_OTLP_ENABLED).toBe('true');
      expect(jaeger.ports).toEqual([expect.stringMatching(/^127\.0\.0\.1:\$\{JAEGER_UI_PORT:-16686\}:16686$/)]);
    });

    it.each(['api', 'worker'])('%s sends its traces to it over OTLP/HTTP (port 4318) under its own service name, and waits for it', (name) => {
      const env = environment(services[name]);
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('${OTEL_EXPORTER_OTLP_ENDPOINT:-http://jaeger:4318}');
      expect(env.OTEL_TRACES_EXPORTER).toBe('${OTEL_TRACES_EXPORTER:-otlp}');
      expect(env.OTEL_SERVICE_NAME).toBe(`render-studio-${name}`);
      expect(services[name].depends_on).toMatchObject({ jaeger: { condition: 'service_started' } });
      // the app's own environment is still there beside it (two anchors merged)
      expect(env.DATABASE_URL).toBe(environment(services.migrate).DATABASE_URL);
    });

    it('says how to turn traces off, and links the Activity view to the viewer', () => {
      const composeText = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
      expect(composeText).toContain('OTEL_TRACES_EXPORTER=none');
      expect(environment(services.api).TRACE_VIEWER_URL).toBe('${TRACE_VIEWER_URL:-http://localhost:16686/trace/}');
    });
  });

  describe('Prometheus', () => {
    const prometheus = services.prometheus;
    const config = parse(fs.readFileSync(path.join(ROOT, 'ops', 'prometheus', 'prometheus.yml'), 'utf8')) as {
      rule_files?: string[];
      scrape_configs: Array<{
        job_name: string;
        metrics_path?: string;
        authorization?: { type?: string; credentials_file?: string };
        dns_sd_configs?: Array<{ names: string[]; type: string; port: number }>;
      }>;
    };
    const job = (name: string) => config.scrape_configs.find((c) => c.job_name === name);

    it('runs prom/prometheus with ops/prometheus mounted, its port on 127.0.0.1 only', () => {
      expect(prometheus.image).toMatch(/^prom\/prometheus:/);
      expect(prometheus.volumes).toEqual(expect.arrayContaining(['./ops/prometheus:/etc/prometheus:ro']));
      expect(prometheus.ports).toEqual([expect.stringMatching(/^127\.0\.0\.1:\$\{PROMETHEUS_PORT:-9090\}:9090$/)]);
      expect(dependencies(prometheus)).toEqual(expect.arrayContaining(['api', 'worker']));
    });

    it("scrapes the API's /metrics with the bearer token the API is given", () => {
      const api = job('api');
      expect(api?.metrics_path).toBe('/metrics');
      expect(api?.dns_sd_configs).toEqual([expect.objectContaining({ names: ['api'], type: 'A', port: 3000 })]);
      expect(api?.authorization).toEqual({ type: 'Bearer', credentials_file: '/prometheus/.metrics-token' });
      // the file is written from the same variable the API checks
      expect(commandOf(prometheus)).toContain(`printf '%s' "$$METRICS_TOKEN" > /prometheus/.metrics-token`);
      expect(environment(prometheus).METRICS_TOKEN).toBe(environment(services.api).METRICS_TOKEN);
      expect(environment(services.api).METRICS_TOKEN).toMatch(/^\$\{METRICS_TOKEN:\?/);
    });

    it('scrapes every worker replica by DNS on both metrics ports, which the workers open on the compose network', () => {
      const env = environment(services.worker);
      expect(env).toMatchObject({ WORKER_METRICS_HOST: '0.0.0.0', WORKER_METRICS_PORT: '9465', TEMPORAL_METRICS_PORT: '9464' });
      expect(job('worker')?.dns_sd_configs).toEqual([expect.objectContaining({ names: ['worker'], type: 'A', port: 9465 })]);
      expect(job('worker-temporal-sdk')?.dns_sd_configs).toEqual([expect.objectContaining({ names: ['worker'], type: 'A', port: 9464 })]);
      // the worker keeps the app environment it had
      expect(env.DATABASE_URL).toBe(environment(services.migrate).DATABASE_URL);
    });

    it('records the documented queries: jobs in flight, failure ratio, p95 job duration, credit movements', () => {
      expect(config.rule_files).toEqual(['/etc/prometheus/rules.yml']);
      const rules = parse(fs.readFileSync(path.join(ROOT, 'ops', 'prometheus', 'rules.yml'), 'utf8')) as {
        groups: Array<{ rules: Array<{ record: string; expr: string }> }>;
      };
      const records = Object.fromEntries(rules.groups.flatMap((g) => g.rules).map((r) => [r.record, r.expr]));
      expect(records['render_studio:jobs_in_flight']).toContain('jobs_in_flight');
      expect(records['render_studio:job_failure_ratio:15m']).toContain('jobs_failed_total');
      expect(records['render_studio:job_duration_seconds:p95_1h']).toMatch(/histogram_quantile\(0\.95, sum by \(kind, le\)/);
      for (const movement of ['reserved', 'consumed', 'released', 'added', 'deducted']) {
        expect(records[`render_studio:credits_${movement}:increase1h`]).toContain(`credits_${movement}_total`);
      }
      expect(records['render_studio:upload_limit_refusals:increase1h']).toBe('sum by (limit) (increase(upload_limit_refusals_total[1h]))');
      expect(records['render_studio:uploads_swept:increase1h']).toBe('sum by (kind) (increase(uploads_swept_total[1h]))');
    });
  });
});
