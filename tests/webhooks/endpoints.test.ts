/**
 * /api/workspaces/:id/webhooks (issue 29, item 2): registering, listing, changing, turning off and on, deleting and
 * rotating the secret of a workspace's webhook endpoints; the refusals with their texts (bad URL, not https, private
 * targets by address and by DNS name, unknown or no event types, too many endpoints); admins and owners only; and
 * secret rotation's 24 hours in which both secrets sign, checked with the `standardwebhooks` library a receiver uses.
 * Host names resolve through a real DNS server the test runs (tests/support/dnsServer.ts).
 */
import type { Knex } from 'knex';
import { Webhook } from 'standardwebhooks';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE, WEBHOOK_MSG, type WebhookEndpointView, type WebhookTargetRule } from '../../domain/webhookEndpoints';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { signingSecrets, signWebhook } from '../../services/integrations/webhookSigning';
import { closeTestKnex, testKnex } from '../support/db';
import { startDnsServer, type TestDnsServer } from '../support/dnsServer';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWithRoles, createTeamWorkspace, type TeamWithRoles } from '../support/workspaces';

let knex: Knex;
let dns: TestDnsServer;
const servers: TestServer[] = [];
let server: TestServer;
let team: TeamWithRoles;

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';
const DNS_TABLE: Record<string, string[]> = {
  'public.example.test': [PUBLIC_V4, PUBLIC_V6],
  'loopback.example.test': ['127.0.0.1'],
  'ten.example.test': ['10.20.30.40'],
  'metadata.example.test': ['169.254.169.254'],
  'loopback6.example.test': ['::1'],
  'ula.example.test': ['fc00::7'],
  'cgnat.example.test': ['100.64.0.9'],
  // one private address among public ones: refused (which address a client picks is not ours to know)
  'mixed.example.test': [PUBLIC_V4, '192.168.1.20'],
};

async function startApp(config: Partial<AppConfig> = {}): Promise<TestServer> {
  const started = await serve(createApp({ config: { ...loadConfig(), ...config }, knex, logger, webhookResolver: dns.resolver }));
  servers.push(started);
  return started;
}

beforeAll(async () => {
  knex = testKnex();
  dns = await startDnsServer(DNS_TABLE);
  server = await startApp();
  team = await createTeamWithRoles(server.baseUrl);
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await dns?.close();
  await closeTemporalClient();
  await closeTestKnex();
});

type Answer = {
  success: boolean;
  error?: string;
  code?: string;
  endpoint: WebhookEndpointView;
  endpoints: WebhookEndpointView[];
  targetRule: WebhookTargetRule;
  secret: string;
  previousSecretExpiresAt: string;
};

const path = (workspaceId: string, rest = '') => `/api/workspaces/${workspaceId}/webhooks${rest}`;
const create = (token: string, body: unknown, workspaceId = team.id, base = server.baseUrl) => request<Answer>(base, path(workspaceId), { token, json: body });
const LOCAL_URL = 'http://127.0.0.1:9/hooks';

async function createOk(body: Record<string, unknown> = {}, workspaceId = team.id, token = team.owner.token): Promise<Answer> {
  const res = await create(token, { url: LOCAL_URL, eventTypes: ['job.completed'], ...body }, workspaceId);
  expect(res.status).toBe(201);
  return res.body;
}

describe('registering and managing an endpoint', () => {
  it('registers with the secret answered once, then lists, reads, changes and deletes it', async () => {
    const res = await create(team.admin.token, { url: 'https://public.example.test/hooks?src=rs', description: 'Listing site', eventTypes: ['job.completed', 'approval.created', 'job.completed'] });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { endpoint, secret } = res.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toEqual({
      id: expect.any(String),
      url: 'https://public.example.test/hooks?src=rs',
      description: 'Listing site',
      eventTypes: ['job.completed', 'approval.created'],
      status: 'enabled',
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
      secretPrefix: secret.slice(0, 10),
      previousSecretExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      createdBy: { name: team.admin.name ?? expect.any(String), email: team.admin.email },
    });

    // the secret is never answered again
    const list = await request<Answer>(server.baseUrl, path(team.id), { token: team.owner.token });
    expect(list.status).toBe(200);
    expect(list.body.endpoints.map((e) => e.id)).toContain(endpoint.id);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const one = await request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}`), { token: team.owner.token });
    expect(one.body.endpoint).toEqual(endpoint);
    expect(JSON.stringify(one.body)).not.toContain(secret);

    const changed = await request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}`), {
      method: 'PATCH',
      token: team.owner.token,
      json: { description: 'Listing site (staging)', eventTypes: ['render.uploaded'], url: `https://${PUBLIC_V4}/other` },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.endpoint).toMatchObject({ description: 'Listing site (staging)', eventTypes: ['render.uploaded'], url: `https://${PUBLIC_V4}/other`, status: 'enabled' });

    const deleted = await request(server.baseUrl, path(team.id, `/${endpoint.id}`), { method: 'DELETE', token: team.admin.token });
    expect(deleted.status).toBe(204);
    const gone = await request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}`), { token: team.owner.token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ success: false, error: WEBHOOK_MSG.endpointNotFound, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' });
    expect(await knex('webhook_endpoints').where({ id: endpoint.id }).first()).toBeUndefined();
  });

  it('turns an endpoint off with a reason, and on again with its failure count reset', async () => {
    const { endpoint } = await createOk();
    const off = await request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}`), { method: 'PATCH', token: team.owner.token, json: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body.endpoint).toMatchObject({ status: 'disabled', disabledReason: WEBHOOK_MSG.disabledByAdmin, disabledAt: expect.any(String) });

    // delivery disabled it after failures (its own reason), then an admin turns it on
    await knex('webhook_endpoints').where({ id: endpoint.id }).update({ consecutive_failures: 12, disabled_reason: 'The receiver answered 410 Gone.' });
    const on = await request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}`), { method: 'PATCH', token: team.admin.token, json: { enabled: true } });
    expect(on.status).toBe(200);
    expect(on.body.endpoint).toMatchObject({ status: 'enabled', disabledReason: null, disabledAt: null, consecutiveFailures: 0 });
  });

  it("does not find another workspace's endpoint, nor an id that is not one", async () => {
    const other = await createTeamWorkspace(server.baseUrl);
    const { endpoint } = await createOk({}, other.id, other.owner.token);
    for (const [method, rest] of [
      ['GET', `/${endpoint.id}`],
      ['PATCH', `/${endpoint.id}`],
      ['DELETE', `/${endpoint.id}`],
      ['POST', `/${endpoint.id}/rotate-secret`],
      ['GET', '/not-an-id'],
    ] as const) {
      const res = await request<Answer>(server.baseUrl, path(team.id, rest), { method, token: team.owner.token, json: method === 'PATCH' ? { description: 'x' } : undefined });
      expect({ method, rest, status: res.status, code: res.body.code }).toEqual({ method, rest, status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' });
    }
    expect((await knex('webhook_endpoints').where({ id: endpoint.id }).first()).description).toBe('');
  });
});

describe('refusals with their texts', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['no URL', { eventTypes: ['job.completed'] }, 'URL is required', 'VALIDATION_ERROR'],
    ['not a URL', { url: 'hooks.example', eventTypes: ['job.completed'] }, 'Enter a full URL starting with https://, for example https://example.com/webhooks.', 'WEBHOOK_URL_INVALID'],
    ['another scheme', { url: 'ftp://example.com/x', eventTypes: ['job.completed'] }, 'Enter a full URL starting with https://, for example https://example.com/webhooks.', 'WEBHOOK_URL_INVALID'],
    [
      'plain http to a public host',
      { url: `http://${PUBLIC_V4}/x`, eventTypes: ['job.completed'] },
      'Webhook URLs must use https:// (plain http:// is allowed only to localhost, 127.0.0.1 or [::1] while developing).',
      'WEBHOOK_URL_NOT_HTTPS',
    ],
    ['credentials in the URL', { url: `https://user:pw@${PUBLIC_V4}/x`, eventTypes: ['job.completed'] }, 'The URL must not contain a user name or password. Use the signing secret to check that a delivery is ours.', 'WEBHOOK_URL_CREDENTIALS'],
    ['a name nobody knows', { url: 'https://nowhere.example.test/x', eventTypes: ['job.completed'] }, 'The host name nowhere.example.test could not be found. Check the URL for typos.', 'WEBHOOK_TARGET_UNRESOLVABLE'],
    ['an unknown event type', { url: LOCAL_URL, eventTypes: ['job.completed', 'job.exploded'] }, WEBHOOK_MSG.unknownEventType('job.exploded', WEBHOOK_EVENT_TYPES), 'VALIDATION_ERROR'],
    ['the test event type', { url: LOCAL_URL, eventTypes: ['webhook.test'] }, WEBHOOK_MSG.unknownEventType('webhook.test', WEBHOOK_EVENT_TYPES), 'VALIDATION_ERROR'],
    ['no event types', { url: LOCAL_URL, eventTypes: [] }, WEBHOOK_MSG.eventTypesRequired, 'VALIDATION_ERROR'],
    ['event types missing', { url: LOCAL_URL }, WEBHOOK_MSG.eventTypesRequired, 'VALIDATION_ERROR'],
    ['event types not a list', { url: LOCAL_URL, eventTypes: 'job.completed' }, WEBHOOK_MSG.eventTypesNotList, 'VALIDATION_ERROR'],
    ['a long description', { url: LOCAL_URL, eventTypes: ['job.completed'], description: 'x'.repeat(501) }, WEBHOOK_MSG.descriptionTooLong, 'VALIDATION_ERROR'],
    ['a URL over 2048 characters', { url: `https://${PUBLIC_V4}/${'a'.repeat(2048)}`, eventTypes: ['job.completed'] }, WEBHOOK_MSG.urlTooLong, 'VALIDATION_ERROR'],
  ];

  it.each(cases)('refuses %s with 400 and its text, creating nothing', async (_what, body, error, code) => {
    const before = await knex('webhook_endpoints').where({ workspace_id: team.id }).count<{ n: string }[]>('* as n');
    const res = await create(team.owner.token, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error, code });
    expect(await knex('webhook_endpoints').where({ workspace_id: team.id }).count<{ n: string }[]>('* as n')).toEqual(before);
  });

  it('refuses a change with nothing in it, an unknown event type and a refused URL, changing nothing', async () => {
    const { endpoint } = await createOk({ url: `https://${PUBLIC_V4}/keep` });
    const patch = (json: unknown) => request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}`), { method: 'PATCH', token: team.owner.token, json });
    expect((await patch({})).body).toEqual({ success: false, error: WEBHOOK_MSG.nothingToChange, code: 'VALIDATION_ERROR' });
    expect((await patch({ eventTypes: ['nope'] })).body.error).toBe(WEBHOOK_MSG.unknownEventType('nope', WEBHOOK_EVENT_TYPES));
    expect((await patch({ enabled: 'yes' })).body.error).toBe(WEBHOOK_MSG.enabledNotBoolean);
    const refused = await patch({ url: 'https://ten.example.test/x' });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('WEBHOOK_TARGET_PRIVATE');
    expect((await knex('webhook_endpoints').where({ id: endpoint.id }).first()).url).toBe(`https://${PUBLIC_V4}/keep`);
  });

  it(`refuses the endpoint after ${MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE} in one workspace with 409, even when they are asked for at once`, async () => {
    const crowded = await createTeamWorkspace(server.baseUrl);
    const answers = await Promise.all(
      Array.from({ length: MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE + 3 }, (_, i) => create(crowded.owner.token, { url: `${LOCAL_URL}/${i}`, eventTypes: ['job.failed'] }, crowded.id)),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect({ status: r.status, body: r.body }).toEqual({ status: 409, body: { success: false, error: WEBHOOK_MSG.tooMany, code: 'WEBHOOK_ENDPOINT_LIMIT' } });
    expect(await knex('webhook_endpoints').where({ workspace_id: crowded.id }).count<{ n: string }[]>('* as n')).toEqual([{ n: String(MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE) }]);
  });
});

describe('private targets', () => {
  const refusedTargets: Array<[string, string]> = [
    ['https://10.0.0.1/x', 'Webhooks can only be sent to public addresses: 10.0.0.1 is a private network address.'],
    ['https://172.16.5.4/x', 'Webhooks can only be sent to public addresses: 172.16.5.4 is a private network address.'],
    ['https://192.168.0.10/x', 'Webhooks can only be sent to public addresses: 192.168.0.10 is a private network address.'],
    ['https://169.254.169.254/latest/meta-data', 'Webhooks can only be sent to public addresses: 169.254.169.254 is a link-local address.'],
    ['https://[fc00::1]/x', 'Webhooks can only be sent to public addresses: fc00::1 is a unique-local (private network) address.'],
    ['https://[::ffff:10.0.0.1]/x', 'Webhooks can only be sent to public addresses: ::ffff:a00:1 is a private network address.'],
    ['https://loopback.example.test/x', 'Webhooks can only be sent to public addresses: loopback.example.test resolves to 127.0.0.1, a loopback address.'],
    ['https://ten.example.test/x', 'Webhooks can only be sent to public addresses: ten.example.test resolves to 10.20.30.40, a private network address.'],
    ['https://metadata.example.test/x', 'Webhooks can only be sent to public addresses: metadata.example.test resolves to 169.254.169.254, a link-local address.'],
    ['https://loopback6.example.test/x', 'Webhooks can only be sent to public addresses: loopback6.example.test resolves to ::1, a loopback address.'],
    ['https://ula.example.test/x', 'Webhooks can only be sent to public addresses: ula.example.test resolves to fc00::7, a unique-local (private network) address.'],
    ['https://cgnat.example.test/x', 'Webhooks can only be sent to public addresses: cgnat.example.test resolves to 100.64.0.9, a carrier-grade NAT address.'],
    ['https://mixed.example.test/x', 'Webhooks can only be sent to public addresses: mixed.example.test resolves to 192.168.1.20, a private network address.'],
    // plain http to a name that resolves to loopback is not "localhost"
    ['http://loopback.example.test/x', 'Webhook URLs must use https:// (plain http:// is allowed only to localhost, 127.0.0.1 or [::1] while developing).'],
  ];

  it.each(refusedTargets)('refuses %s', async (url, error) => {
    const res = await create(team.owner.token, { url, eventTypes: ['job.completed'] });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { success: false, error, code: url.startsWith('http:') ? 'WEBHOOK_URL_NOT_HTTPS' : 'WEBHOOK_TARGET_PRIVATE' },
    });
  });

  it('accepts a name whose every address is public, and loopback literals while developing', async () => {
    const questionsBefore = dns.questions();
    expect((await create(team.owner.token, { url: 'https://public.example.test/x', eventTypes: ['job.completed'] })).status).toBe(201);
    expect(dns.questions()).toBeGreaterThan(questionsBefore);
    for (const url of ['http://127.0.0.1:8080/x', 'http://localhost:8080/x', 'http://[::1]:8080/x']) {
      expect({ url, status: (await create(team.owner.token, { url, eventTypes: ['job.completed'] })).status }).toEqual({ url, status: 201 });
    }
    // the list says so, for the form's hint
    expect((await request<Answer>(server.baseUrl, path(team.id), { token: team.owner.token })).body.targetRule).toEqual({ loopback: true, privateAddresses: false });
  });

  it('in production refuses plain http even to loopback, and loopback over https', async () => {
    const production = await startApp({ nodeEnv: 'production' });
    const post = (url: string) => create(team.owner.token, { url, eventTypes: ['job.completed'] }, team.id, production.baseUrl);
    for (const url of ['http://127.0.0.1:8080/x', 'http://localhost:8080/x', 'http://[::1]:8080/x']) {
      expect({ url, body: (await post(url)).body }).toEqual({ url, body: { success: false, error: 'Webhook URLs must use https://.', code: 'WEBHOOK_URL_NOT_HTTPS' } });
    }
    expect((await post('https://127.0.0.1/x')).body.code).toBe('WEBHOOK_TARGET_PRIVATE');
    expect((await post('https://localhost/x')).body.code).toBe('WEBHOOK_TARGET_PRIVATE');
    // IPv6 forms that carry a loopback or link-local IPv4 address (tests/webhooks/webhookTargets.test.ts has them all)
    for (const url of ['https://[::127.0.0.1]/', 'https://[::169.254.169.254]/', 'https://[::ffff:0:127.0.0.1]/', 'https://[2002:7f00:1::]/', 'https://[2002:a9fe:a9fe::]/']) {
      const res = await post(url);
      expect({ url, status: res.status, code: res.body.code }).toEqual({ url, status: 400, code: 'WEBHOOK_TARGET_PRIVATE' });
    }
    expect((await post('https://public.example.test/x')).status).toBe(201);
    expect((await request<Answer>(production.baseUrl, path(team.id), { token: team.owner.token })).body.targetRule).toEqual({ loopback: false, privateAddresses: false });
  });

  it('allows private targets when the operator says so (WEBHOOK_ALLOW_PRIVATE_TARGETS=on), never plain http in production', async () => {
    const allowing = await startApp({ nodeEnv: 'production', webhookAllowPrivateTargets: true });
    const post = (url: string) => create(team.owner.token, { url, eventTypes: ['job.completed'] }, team.id, allowing.baseUrl);
    expect((await post('https://ten.example.test/x')).status).toBe(201);
    expect((await post('https://[fc00::1]/x')).status).toBe(201);
    expect((await post('http://10.0.0.1/x')).body.code).toBe('WEBHOOK_URL_NOT_HTTPS');
    expect((await request<Answer>(allowing.baseUrl, path(team.id), { token: team.owner.token })).body.targetRule).toEqual({ loopback: false, privateAddresses: true });
    expect(loadConfig({ ...process.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on' }).webhookAllowPrivateTargets).toBe(true);
    expect(() => loadConfig({ ...process.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' })).toThrow('WEBHOOK_ALLOW_PRIVATE_TARGETS must be "on" or "off", got "yes"');
  });
});

describe('rotating the secret', () => {
  it('answers a new secret; for 24 hours deliveries carry both signatures, each verifying with its secret, then only the new one', async () => {
    const { endpoint, secret: oldSecret } = await createOk();
    const res = await request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}/rotate-secret`), { method: 'POST', token: team.admin.token });
    expect(res.status).toBe(200);
    const { secret: newSecret, previousSecretExpiresAt } = res.body;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    const graceMs = Date.parse(previousSecretExpiresAt) - Date.now();
    expect(graceMs).toBeGreaterThan(23.9 * 3600_000);
    expect(graceMs).toBeLessThanOrEqual(24 * 3600_000);
    expect(res.body.endpoint).toMatchObject({ secretPrefix: newSecret.slice(0, 10), previousSecretExpiresAt });

    const row = await knex('webhook_endpoints').where({ id: endpoint.id }).first();
    expect(row).toMatchObject({ secret: newSecret, previous_secret: oldSecret });
    const body = JSON.stringify({ type: 'webhook.test', version: 1, timestamp: new Date().toISOString(), data: {} });
    const sign = (at: Date) =>
      signWebhook({
        secrets: signingSecrets({ secret: row.secret, previousSecret: row.previous_secret, previousSecretExpiresAt: row.previous_secret_expires_at }, at),
        messageId: 'msg_rotation',
        at: new Date(),
        body,
      });
    const now = sign(new Date());
    expect(now['webhook-signature'].split(' ')).toHaveLength(2);
    // a receiver on either secret accepts
    expect(new Webhook(oldSecret).verify(body, { ...now })).toBeTruthy();
    expect(new Webhook(newSecret).verify(body, { ...now })).toBeTruthy();
    // the day after: only the new secret signs
    const later = sign(new Date(Date.now() + 24 * 3600_000 + 1000));
    expect(later['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(newSecret).verify(body, { ...later })).toBeTruthy();
    expect(() => new Webhook(oldSecret).verify(body, { ...later })).toThrow();

    // rotating again ends the first secret at once: the signing pair is the two newest
    const again = await request<Answer>(server.baseUrl, path(team.id, `/${endpoint.id}/rotate-secret`), { method: 'POST', token: team.owner.token });
    const row2 = await knex('webhook_endpoints').where({ id: endpoint.id }).first();
    expect([row2.secret, row2.previous_secret]).toEqual([again.body.secret, newSecret]);
  });
});

describe('who may manage webhooks', () => {
  it('admins and owners only: members and viewers get 403, non-members 404, and nothing changes', async () => {
    const { endpoint } = await createOk();
    const calls: Array<{ method: string; rest: string; json?: unknown }> = [
      { method: 'GET', rest: '' },
      { method: 'POST', rest: '', json: { url: LOCAL_URL, eventTypes: ['job.completed'] } },
      { method: 'GET', rest: `/${endpoint.id}` },
      { method: 'PATCH', rest: `/${endpoint.id}`, json: { enabled: false } },
      { method: 'DELETE', rest: `/${endpoint.id}` },
      { method: 'POST', rest: `/${endpoint.id}/rotate-secret` },
    ];
    const before = await knex('webhook_endpoints').where({ workspace_id: team.id }).orderBy('id');
    for (const [who, user, status, code] of [
      ['member', team.member, 403, 'WORKSPACE_FORBIDDEN'],
      ['viewer', team.viewer, 403, 'WORKSPACE_FORBIDDEN'],
      ['outsider', team.outsider, 404, 'WORKSPACE_NOT_FOUND'],
    ] as const) {
      for (const call of calls) {
        const res = await request<Answer>(server.baseUrl, path(team.id, call.rest), { method: call.method, token: user.token, json: call.json });
        expect({ who, ...call, status: res.status, code: res.body.code }).toEqual({ who, ...call, status, code });
      }
    }
    expect(await knex('webhook_endpoints').where({ workspace_id: team.id }).orderBy('id')).toEqual(before);
    // no session: 401
    expect((await request(server.baseUrl, path(team.id))).status).toBe(401);
  });
});
