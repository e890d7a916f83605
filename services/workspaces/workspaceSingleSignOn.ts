/**
 * A workspace's own single sign-on (DESIGN.md "Accounts", issue 45): its admins and owners set an OpenID provider
 * (issuer, client id and secret, the button's name) for the e-mail domains they claim, and may require it for those
 * domains. The sign-in itself is services/accounts/singleSignOn.ts's code flow, with this provider.
 *
 * - The issuer is checked when saved: it must be an https:// address that resolves to public addresses (the webhook
 *   targets' rule, services/integrations/webhookTargets.ts) and answer a discovery document for itself; otherwise
 *   nothing is stored.
 * - The client secret is kept encrypted (./ssoClientSecrets.ts) and never answered: a view says only that it is set.
 * - A domain belongs to one workspace; public mail services cannot be claimed; and the admin claiming a domain must
 *   have a verified address at it, so nobody claims a domain they have no address at.
 * - Requiring SSO refuses a password (sign-in, its second step, a passkey sign-in and a password reset) to the
 *   addresses of its domains, and ends their sessions that were not opened through single sign-on. The workspace's
 *   owners are exempt: they keep their password, so a broken provider never locks the workspace out.
 */
import type { Knex } from 'knex';
import * as oidc from 'openid-client';
import type { AppConfig, SsoProviderConfig } from '../../config/env';
import type { Logger } from '../../config/logger';
import { DomainError } from '../../domain/errors';
import {
  EMAIL_DOMAIN_PATTERN,
  MAX_SSO_DOMAINS,
  PUBLIC_MAIL_DOMAINS,
  WORKSPACE_SSO_CODES,
  WORKSPACE_SSO_MSG,
  emailDomainOf,
  type SsoLookup,
  type WorkspaceSsoSettings,
} from '../../domain/singleSignOn';
import { endSessionsWithoutSingleSignOn } from '../accounts/sessions';
import { resolveWebhookTarget, webhookTargetPolicy, WebhookTargetError, type HostResolver } from '../integrations/webhookTargets';
import { lockWorkspace } from './workspaces';
import { openClientSecret, sealClientSecret } from './ssoClientSecrets';

type Db = Knex | Knex.Transaction;

export type WorkspaceSsoConfig = Pick<AppConfig, 'publicUrl' | 'totpEncryptionKey' | 'nodeEnv' | 'webhookAllowPrivateTargets'>;

export interface WorkspaceSsoDeps {
  knex: Knex;
  config: WorkspaceSsoConfig;
  logger: Pick<Logger, 'warn' | 'info'>;
  /** host name look-ups for the issuer's address check (tests pass their own) */
  resolve?: HostResolver;
}

export interface WorkspaceSsoInput {
  issuerUrl: string;
  clientId: string;
  /** absent: keep the secret already stored (a first save needs one) */
  clientSecret?: string;
  displayName: string;
  domains: string[];
  ssoRequired: boolean;
}

interface ProviderRow {
  workspace_id: string;
  issuer_url: string;
  client_id: string;
  client_secret_ciphertext: string;
  display_name: string;
  sso_required: boolean;
  updated_at: Date;
}

const refuse = (status: number, code: string, message: string) => new DomainError(status, code, message);

export function redirectUriOf(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/api/auth/sso/callback`;
}

async function domainsOf(db: Db, workspaceId: string): Promise<string[]> {
  return ((await db('workspace_sso_domains').where({ workspace_id: workspaceId }).orderBy('domain').select('domain')) as Array<{ domain: string }>).map((r) => r.domain);
}

function toSettings(row: ProviderRow, domains: string[], publicUrl: string): WorkspaceSsoSettings {
  return {
    issuerUrl: row.issuer_url,
    clientId: row.client_id,
    clientSecretSet: true,
    displayName: row.display_name,
    domains,
    ssoRequired: row.sso_required,
    redirectUri: redirectUriOf(publicUrl),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The workspace's single sign-on as its admins see it, or null when none is set up. */
export async function getWorkspaceSso(db: Db, config: Pick<AppConfig, 'publicUrl'>, workspaceId: string): Promise<WorkspaceSsoSettings | null> {
  const row = (await db('workspace_sso_providers').where({ workspace_id: workspaceId }).first()) as ProviderRow | undefined;
  return row ? toSettings(row, await domainsOf(db, workspaceId), config.publicUrl) : null;
}

/** The domains as entered: trimmed, lower case, without a leading @, each once; a clear refusal for any other form. */
export function normalizeDomains(raw: readonly string[]): string[] {
  const domains = [...new Set(raw.map((d) => d.trim().toLowerCase().replace(/^@/, '')).filter((d) => d !== ''))];
  if (domains.length === 0) throw refuse(400, WORKSPACE_SSO_CODES.domainInvalid, WORKSPACE_SSO_MSG.domainsRequired);
  if (domains.length > MAX_SSO_DOMAINS) throw refuse(400, WORKSPACE_SSO_CODES.domainInvalid, WORKSPACE_SSO_MSG.tooManyDomains);
  for (const domain of domains) {
    if (!EMAIL_DOMAIN_PATTERN.test(domain)) throw refuse(400, WORKSPACE_SSO_CODES.domainInvalid, WORKSPACE_SSO_MSG.domainInvalid(domain));
    if (PUBLIC_MAIL_DOMAINS.includes(domain)) throw refuse(400, WORKSPACE_SSO_CODES.publicDomain, WORKSPACE_SSO_MSG.publicDomain(domain));
  }
  return domains;
}

/** The issuer as an address the server may fetch (https, public), then its discovery document read with this client. */
async function checkIssuer(deps: WorkspaceSsoDeps, issuerUrl: string, clientId: string, clientSecret: string): Promise<void> {
  let issuer: URL;
  try {
    ({ url: issuer } = await resolveWebhookTarget(issuerUrl, webhookTargetPolicy(deps.config), deps.resolve));
  } catch (err) {
    if (err instanceof WebhookTargetError) {
      const unresolvable = err.code === 'WEBHOOK_TARGET_UNRESOLVABLE';
      throw refuse(400, unresolvable ? WORKSPACE_SSO_CODES.issuerUnreachable : WORKSPACE_SSO_CODES.issuerInvalid, unresolvable ? WORKSPACE_SSO_MSG.issuerUnreachable(issuerUrl) : WORKSPACE_SSO_MSG.issuerInvalid);
    }
    throw err;
  }
  if (issuer.search || issuer.hash) throw refuse(400, WORKSPACE_SSO_CODES.issuerInvalid, WORKSPACE_SSO_MSG.issuerInvalid);
  const options: oidc.DiscoveryRequestOptions = { timeout: 10, ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}) };
  try {
    await oidc.discovery(issuer, clientId, undefined, oidc.ClientSecretBasic(clientSecret), options);
  } catch (err) {
    deps.logger.info({ err: (err as Error).message, issuer: issuerUrl }, 'a workspace identity provider failed its discovery check');
    const unreachable = err instanceof TypeError || (err instanceof Error && /fetch failed|timed? ?out|abort/i.test(`${err.message} ${String((err as { cause?: unknown }).cause ?? '')}`));
    throw refuse(400, unreachable ? WORKSPACE_SSO_CODES.issuerUnreachable : WORKSPACE_SSO_CODES.issuerInvalid, unreachable ? WORKSPACE_SSO_MSG.issuerUnreachable(issuerUrl) : WORKSPACE_SSO_MSG.issuerNotProvider(issuerUrl));
  }
}

/**
 * Sets up or changes the workspace's single sign-on (the caller's grant is checked by the route). Everything is
 * checked before anything is written; turning the requirement on ends the password sessions of the people it now
 * covers. Answers the settings and how many sessions ended.
 */
export async function saveWorkspaceSso(
  deps: WorkspaceSsoDeps,
  input: { workspaceId: string; userId: string; sessionId: string | null; settings: WorkspaceSsoInput },
): Promise<{ settings: WorkspaceSsoSettings; endedSessions: number }> {
  const { settings } = input;
  const domains = normalizeDomains(settings.domains);
  const existing = (await deps.knex('workspace_sso_providers').where({ workspace_id: input.workspaceId }).first()) as ProviderRow | undefined;
  const clientSecret = settings.clientSecret ?? (existing ? openClientSecret(deps.config.totpEncryptionKey, input.workspaceId, existing.client_secret_ciphertext) : null);
  if (!clientSecret) throw refuse(400, WORKSPACE_SSO_CODES.clientInvalid, WORKSPACE_SSO_MSG.clientSecretRequired);
  // the caller's own verified address at each domain claimed
  const caller = (await deps.knex('users').where({ id: input.userId }).first('email', 'email_verified_at')) as { email: string; email_verified_at: Date | null };
  const callerDomain = emailDomainOf(caller.email);
  const alreadyClaimed = new Set(existing ? await domainsOf(deps.knex, input.workspaceId) : []);
  for (const domain of domains) {
    if (alreadyClaimed.has(domain)) continue;
    if (domain !== callerDomain || !caller.email_verified_at) throw refuse(403, WORKSPACE_SSO_CODES.domainNotYours, WORKSPACE_SSO_MSG.domainNotYours(domain));
  }
  // an admin (not an owner, who is exempt) at one of the domains would end their own password session: SSO first
  if (settings.ssoRequired && domains.includes(callerDomain)) {
    const owner = await deps.knex('workspace_members').where({ workspace_id: input.workspaceId, user_id: input.userId, role: 'owner' }).first('user_id');
    const session = input.sessionId ? ((await deps.knex('sessions').where({ id: input.sessionId }).first('authenticated_with')) as { authenticated_with: string } | undefined) : undefined;
    if (!owner && session?.authenticated_with !== 'single_sign_on') throw refuse(409, WORKSPACE_SSO_CODES.adminNeedsSso, WORKSPACE_SSO_MSG.adminNeedsSso(settings.displayName));
  }
  await checkIssuer(deps, settings.issuerUrl, settings.clientId, clientSecret);

  return deps.knex.transaction(async (trx) => {
    const workspace = await lockWorkspace(trx, input.workspaceId);
    if (workspace.personal_user_id !== null) throw refuse(400, WORKSPACE_SSO_CODES.personalWorkspace, WORKSPACE_SSO_MSG.personalWorkspace);
    const taken = (await trx('workspace_sso_domains').whereIn('domain', domains).whereNot('workspace_id', input.workspaceId).first('domain')) as { domain: string } | undefined;
    if (taken) throw refuse(409, WORKSPACE_SSO_CODES.domainTaken, WORKSPACE_SSO_MSG.domainTaken(taken.domain));
    const row = {
      issuer_url: settings.issuerUrl,
      client_id: settings.clientId,
      client_secret_ciphertext: sealClientSecret(deps.config.totpEncryptionKey, input.workspaceId, clientSecret),
      display_name: settings.displayName,
      sso_required: settings.ssoRequired,
      updated_by_user_id: input.userId,
      updated_at: trx.fn.now(),
    };
    await trx('workspace_sso_providers').insert({ workspace_id: input.workspaceId, ...row }).onConflict('workspace_id').merge();
    await trx('workspace_sso_domains').where({ workspace_id: input.workspaceId }).whereNotIn('domain', domains).delete();
    await trx('workspace_sso_domains').insert(domains.map((domain) => ({ domain, workspace_id: input.workspaceId }))).onConflict('domain').ignore();
    // another workspace claimed one between the check and the insert: the primary key refused it (ignored above)
    const ours = await domainsOf(trx, input.workspaceId);
    const lost = domains.find((d) => !ours.includes(d));
    if (lost) throw refuse(409, WORKSPACE_SSO_CODES.domainTaken, WORKSPACE_SSO_MSG.domainTaken(lost));
    const endedSessions = settings.ssoRequired ? await endPasswordSessions(trx, input.workspaceId, domains) : 0;
    const saved = (await trx('workspace_sso_providers').where({ workspace_id: input.workspaceId }).first()) as ProviderRow;
    return { settings: toSettings(saved, ours, deps.config.publicUrl), endedSessions };
  });
}

/** Ends the sessions not opened through single sign-on of everyone at the domains, except the workspace's owners. */
async function endPasswordSessions(trx: Knex.Transaction, workspaceId: string, domains: string[]): Promise<number> {
  const people = (await trx('users as u')
    .whereRaw("lower(split_part(u.email, '@', 2)) = any(?)", [domains])
    .whereNotExists(trx('workspace_members as m').whereRaw('m.user_id = u.id').andWhere({ 'm.workspace_id': workspaceId, 'm.role': 'owner' }))
    .whereExists(trx('sessions as s').whereRaw('s.user_id = u.id').whereNot('s.authenticated_with', 'single_sign_on'))
    .select('u.id')) as Array<{ id: string }>;
  let ended = 0;
  for (const person of people) ended += await endSessionsWithoutSingleSignOn(trx, person.id);
  return ended;
}

/** Removes the workspace's single sign-on: its domains are free again and passwords work for them. */
export async function deleteWorkspaceSso(knex: Knex, workspaceId: string): Promise<void> {
  await knex.transaction(async (trx) => {
    await lockWorkspace(trx, workspaceId);
    const deleted = await trx('workspace_sso_providers').where({ workspace_id: workspaceId }).delete();
    if (!deleted) throw refuse(404, WORKSPACE_SSO_CODES.notSetUp, WORKSPACE_SSO_MSG.notSetUp);
    await trx('workspace_sso_domains').where({ workspace_id: workspaceId }).delete();
  });
}

export interface WorkspaceProvider {
  workspaceId: string;
  workspaceName: string;
  displayName: string;
  ssoRequired: boolean;
  domains: string[];
  config: SsoProviderConfig;
}

async function providerRow(db: Db, where: { domain: string } | { workspaceId: string }) {
  const query = db('workspace_sso_providers as p').join('workspaces as w', 'w.id', 'p.workspace_id');
  if ('domain' in where) query.join('workspace_sso_domains as d', 'd.workspace_id', 'p.workspace_id').where('d.domain', where.domain);
  else query.where('p.workspace_id', where.workspaceId);
  return (await query.first('p.*', 'w.name as workspace_name')) as (ProviderRow & { workspace_name: string }) | undefined;
}

async function toProvider(db: Db, config: Pick<AppConfig, 'totpEncryptionKey'>, row: ProviderRow & { workspace_name: string }): Promise<WorkspaceProvider | null> {
  const clientSecret = openClientSecret(config.totpEncryptionKey, row.workspace_id, row.client_secret_ciphertext);
  if (clientSecret === null) return null;
  return {
    workspaceId: row.workspace_id,
    workspaceName: row.workspace_name,
    displayName: row.display_name,
    ssoRequired: row.sso_required,
    domains: await domainsOf(db, row.workspace_id),
    config: { issuerUrl: row.issuer_url, clientId: row.client_id, clientSecret, name: row.display_name },
  };
}

/** The workspace provider for an e-mail address's domain, or null. */
export async function providerForEmail(db: Db, config: Pick<AppConfig, 'totpEncryptionKey'>, email: string): Promise<WorkspaceProvider | null> {
  const row = await providerRow(db, { domain: emailDomainOf(email) });
  return row ? toProvider(db, config, row) : null;
}

export async function providerOfWorkspace(db: Db, config: Pick<AppConfig, 'totpEncryptionKey'>, workspaceId: string): Promise<WorkspaceProvider | null> {
  const row = await providerRow(db, { workspaceId });
  return row ? toProvider(db, config, row) : null;
}

/** What the sign-in page may know about an address: only its domain's provider, nothing about any account. */
export async function lookupSsoForEmail(db: Db, email: string): Promise<SsoLookup> {
  const row = await providerRow(db, { domain: emailDomainOf(email) });
  return row ? { provider: { id: row.workspace_id, name: row.display_name }, ssoRequired: row.sso_required } : { provider: null, ssoRequired: false };
}

/** The requirement that covers this address, unless the person is an owner of the workspace that requires it. */
export async function ssoRequirementFor(db: Db, email: string, userId: string | null): Promise<{ workspaceName: string; providerName: string } | null> {
  const row = await providerRow(db, { domain: emailDomainOf(email) });
  if (!row || !row.sso_required) return null;
  if (userId) {
    const owner = await db('workspace_members').where({ workspace_id: row.workspace_id, user_id: userId, role: 'owner' }).first('user_id');
    if (owner) return null;
  }
  return { workspaceName: row.workspace_name, providerName: row.display_name };
}

export class SsoRequiredError extends DomainError {
  constructor(requirement: { workspaceName: string; providerName: string }, message: string = WORKSPACE_SSO_MSG.ssoRequired(requirement.workspaceName, requirement.providerName)) {
    super(403, WORKSPACE_SSO_CODES.ssoRequired, message);
  }
}

/** Refuses a password (or passkey) sign-in, its second step, or a password reset for an address that must use SSO. */
export async function refuseWhereSsoRequired(db: Db, user: { id: string; email: string }): Promise<void> {
  const requirement = await ssoRequirementFor(db, user.email, user.id);
  if (requirement) throw new SsoRequiredError(requirement);
}
