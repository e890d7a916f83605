/**
 * A workspace's webhook endpoints (DESIGN.md "Integrations"): registering one (its URL checked by the target rules of
 * webhookTargets.ts, its signing secret answered once), listing, changing, turning off and on, deleting, and rotating
 * the secret (the previous one keeps signing for 24 hours, so receivers can switch without losing a delivery).
 * The routes check the workspace action ('webhooks', admins and owners) before calling in here.
 */
import type { Knex } from 'knex';
import {
  MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE,
  WEBHOOK_CODES,
  WEBHOOK_MSG,
  WEBHOOK_SECRET_GRACE_MS,
  WEBHOOK_SECRET_PREFIX_LENGTH,
  type WebhookEndpointStatus,
  type WebhookEndpointView,
} from '../../domain/webhookEndpoints';
import { DomainError } from '../../domain/errors';
import type { WebhookEventType } from '../../domain/webhooks';
import { lockWorkspace } from '../workspaces/workspaces';
import { WEBHOOK_OUTBOX_CHANNEL } from './webhookOutbox';
import { newWebhookSecret } from './webhookSigning';
import { resolveWebhookTarget, WebhookTargetError, type HostResolver, type WebhookTargetPolicy } from './webhookTargets';

type Db = Knex | Knex.Transaction;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class WebhookEndpointNotFoundError extends DomainError {
  constructor() {
    super(404, WEBHOOK_CODES.endpointNotFound, WEBHOOK_MSG.endpointNotFound);
  }
}

/** A URL the target rules refuse, answered 400 with the rule's own words and code. */
export class WebhookUrlRefusedError extends DomainError {
  constructor(cause: WebhookTargetError) {
    super(400, cause.code, cause.message);
  }
}

export interface WebhookEndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  description: string;
  event_types: WebhookEventType[];
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  status: WebhookEndpointStatus;
  disabled_reason: string | null;
  disabled_at: Date | null;
  consecutive_failures: number;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  creator_name?: string | null;
  creator_email?: string | null;
}

/** What checks a URL: the target policy and, for tests, the resolver (dns.lookup otherwise). */
export interface WebhookTargetCheck {
  policy: WebhookTargetPolicy;
  resolve?: HostResolver;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

export function endpointView(row: WebhookEndpointRow, now = Date.now()): WebhookEndpointView {
  const graceEnds = row.previous_secret && row.previous_secret_expires_at && new Date(row.previous_secret_expires_at).getTime() > now ? row.previous_secret_expires_at : null;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: [...row.event_types],
    status: row.status,
    disabledReason: row.disabled_reason,
    disabledAt: iso(row.disabled_at),
    consecutiveFailures: row.consecutive_failures,
    secretPrefix: row.secret.slice(0, WEBHOOK_SECRET_PREFIX_LENGTH),
    previousSecretExpiresAt: iso(graceEnds),
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
    createdBy: row.creator_email ? { name: row.creator_name || row.creator_email, email: row.creator_email } : null,
  };
}

function endpointQuery(db: Db) {
  return db('webhook_endpoints as e')
    .leftJoin('users as u', 'u.id', 'e.created_by')
    .leftJoin('profiles as p', 'p.id', 'e.created_by')
    .select('e.*', 'u.email as creator_email', 'p.name as creator_name');
}

/** The endpoint `endpointId` of the workspace, or WebhookEndpointNotFoundError (another workspace's is not found either). */
export async function requireEndpoint(db: Db, workspaceId: string, endpointId: string): Promise<WebhookEndpointRow> {
  if (!UUID.test(endpointId)) throw new WebhookEndpointNotFoundError();
  const row = (await endpointQuery(db).where({ 'e.id': endpointId.toLowerCase(), 'e.workspace_id': workspaceId }).first()) as WebhookEndpointRow | undefined;
  if (!row) throw new WebhookEndpointNotFoundError();
  return row;
}

/** The workspace's endpoints, oldest first (the order they were registered in). */
export async function listEndpoints(db: Db, workspaceId: string): Promise<WebhookEndpointView[]> {
  const rows = (await endpointQuery(db).where('e.workspace_id', workspaceId).orderBy([{ column: 'e.created_at' }, { column: 'e.id' }])) as WebhookEndpointRow[];
  return rows.map((row) => endpointView(row));
}

export async function getEndpoint(db: Db, workspaceId: string, endpointId: string): Promise<WebhookEndpointView> {
  return endpointView(await requireEndpoint(db, workspaceId, endpointId));
}

/** The URL as stored, once the target rules accept it (a DNS look-up: done before any transaction opens). */
async function acceptedUrl(url: string, check: WebhookTargetCheck): Promise<string> {
  try {
    return (await resolveWebhookTarget(url, check.policy, check.resolve)).url.toString();
  } catch (err) {
    if (err instanceof WebhookTargetError) throw new WebhookUrlRefusedError(err);
    throw err;
  }
}

export interface NewEndpoint {
  workspaceId: string;
  actorId: string;
  url: string;
  description: string;
  eventTypes: readonly WebhookEventType[];
}

/**
 * Registers an endpoint and answers its signing secret, the only time it is shown. At most
 * MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE per workspace, counted under the workspace's lock so two registrations at once
 * cannot both pass the limit.
 */
export async function createEndpoint(knex: Knex, input: NewEndpoint, check: WebhookTargetCheck): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  const url = await acceptedUrl(input.url, check);
  const secret = newWebhookSecret();
  return knex.transaction(async (trx) => {
    await lockWorkspace(trx, input.workspaceId);
    const [{ n }] = (await trx('webhook_endpoints').where({ workspace_id: input.workspaceId }).count<{ n: string }[]>('* as n')) as Array<{ n: string }>;
    if (Number(n) >= MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE) throw new DomainError(409, WEBHOOK_CODES.tooMany, WEBHOOK_MSG.tooMany);
    const [{ id }] = (await trx('webhook_endpoints')
      .insert({
        workspace_id: input.workspaceId,
        url,
        description: input.description,
        event_types: uniqueTypes(input.eventTypes),
        secret,
        created_by: input.actorId,
      })
      .returning('id')) as Array<{ id: string }>;
    return { endpoint: endpointView(await requireEndpoint(trx, input.workspaceId, id)), secret };
  });
}

function uniqueTypes(types: readonly WebhookEventType[]): WebhookEventType[] {
  return [...new Set(types)];
}

export interface EndpointChanges {
  url?: string;
  description?: string;
  eventTypes?: readonly WebhookEventType[];
  enabled?: boolean;
}

/**
 * Changes an endpoint. `enabled: false` turns it off (its deliveries wait); `enabled: true` turns it back on, clears
 * the failure count and the reason it was off, and wakes the delivery relay so waiting deliveries go out at once.
 */
export async function updateEndpoint(knex: Knex, input: { workspaceId: string; endpointId: string; changes: EndpointChanges }, check: WebhookTargetCheck): Promise<WebhookEndpointView> {
  const { changes } = input;
  const url = changes.url === undefined ? undefined : await acceptedUrl(changes.url, check);
  return knex.transaction(async (trx) => {
    const row = await requireEndpoint(trx, input.workspaceId, input.endpointId);
    const update: Record<string, unknown> = { updated_at: trx.fn.now() };
    if (url !== undefined) update.url = url;
    if (changes.description !== undefined) update.description = changes.description;
    if (changes.eventTypes !== undefined) update.event_types = uniqueTypes(changes.eventTypes);
    let wake = false;
    if (changes.enabled === true) {
      Object.assign(update, { status: 'enabled', disabled_reason: null, disabled_at: null, consecutive_failures: 0 });
      wake = row.status !== 'enabled';
    } else if (changes.enabled === false && row.status === 'enabled') {
      Object.assign(update, { status: 'disabled', disabled_reason: WEBHOOK_MSG.disabledByAdmin, disabled_at: trx.fn.now() });
    }
    await trx('webhook_endpoints').where({ id: row.id }).update(update);
    if (wake) await trx.raw('select pg_notify(?, ?)', [WEBHOOK_OUTBOX_CHANNEL, row.id]);
    return endpointView(await requireEndpoint(trx, input.workspaceId, row.id));
  });
}

/** Deletes an endpoint with its delivery log (the rows cascade); events other endpoints still deliver stay. */
export async function deleteEndpoint(knex: Knex, input: { workspaceId: string; endpointId: string }): Promise<void> {
  const row = await requireEndpoint(knex, input.workspaceId, input.endpointId);
  await knex('webhook_endpoints').where({ id: row.id }).delete();
}

/**
 * A new signing secret, answered once. The current one becomes the previous one and keeps signing (a second
 * signature on every delivery) for WEBHOOK_SECRET_GRACE_MS; one rotated out earlier stops at once.
 */
export async function rotateEndpointSecret(knex: Knex, input: { workspaceId: string; endpointId: string }): Promise<{ secret: string; previousSecretExpiresAt: string; endpoint: WebhookEndpointView }> {
  const secret = newWebhookSecret();
  const expiresAt = new Date(Date.now() + WEBHOOK_SECRET_GRACE_MS);
  return knex.transaction(async (trx) => {
    const row = await requireEndpoint(trx, input.workspaceId, input.endpointId);
    await trx('webhook_endpoints')
      .where({ id: row.id })
      .update({ previous_secret: trx.ref('secret'), previous_secret_expires_at: expiresAt, secret, updated_at: trx.fn.now() });
    return { secret, previousSecretExpiresAt: expiresAt.toISOString(), endpoint: endpointView(await requireEndpoint(trx, input.workspaceId, row.id)) };
  });
}
