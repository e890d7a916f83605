import type { SsoProviderSummary } from '../../../domain/singleSignOn';
import { api } from './client';

export async function fetchSsoProviders(): Promise<SsoProviderSummary[]> {
  return (await api.get('auth/sso/providers').json<{ success: true; providers: SsoProviderSummary[] }>()).providers;
}

/** A full-page navigation: the API redirects to the provider, which redirects back to the API's callback. */
export const SSO_START_URL = '/api/auth/sso/start';
