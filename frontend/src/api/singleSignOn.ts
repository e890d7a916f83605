import type { SsoLookup, SsoProviderSummary, WorkspaceSsoSettings } from '../../../domain/singleSignOn';
import { api } from './client';

export async function fetchSsoProviders(): Promise<SsoProviderSummary[]> {
  return (await api.get('auth/sso/providers').json<{ success: true; providers: SsoProviderSummary[] }>()).providers;
}

/** A full-page navigation: the API redirects to the provider, which redirects back to the API's callback. */
export const SSO_START_URL = '/api/auth/sso/start';

/** The single sign-on of an address's domain (a workspace's provider), and whether a password is refused there. */
export async function lookupSso(email: string): Promise<SsoLookup> {
  const body = await api.post('auth/sso/lookup', { json: { email } }).json<{ success: true } & SsoLookup>();
  return { provider: body.provider, ssoRequired: body.ssoRequired };
}

/** The start of a workspace provider's sign-in for this address (a full-page navigation, like SSO_START_URL). */
export function ssoStartUrlFor(email: string): string {
  return `${SSO_START_URL}?${new URLSearchParams({ email }).toString()}`;
}

export async function fetchWorkspaceSso(workspaceId: string): Promise<WorkspaceSsoSettings | null> {
  return (await api.get(`workspaces/${encodeURIComponent(workspaceId)}/sso`).json<{ success: true; sso: WorkspaceSsoSettings | null }>()).sso;
}

export interface WorkspaceSsoForm {
  issuerUrl: string;
  clientId: string;
  /** left out to keep the stored one */
  clientSecret?: string;
  displayName: string;
  domains: string[];
  ssoRequired: boolean;
}

export async function saveWorkspaceSso(workspaceId: string, form: WorkspaceSsoForm): Promise<{ sso: WorkspaceSsoSettings; endedSessions: number }> {
  return api.put(`workspaces/${encodeURIComponent(workspaceId)}/sso`, { json: form }).json<{ success: true; sso: WorkspaceSsoSettings; endedSessions: number }>();
}

export async function removeWorkspaceSso(workspaceId: string): Promise<void> {
  await api.delete(`workspaces/${encodeURIComponent(workspaceId)}/sso`);
}
