import type { TokenScope } from '../../../domain/accessTokens';
import { api } from './client';

/** A personal access token as the list shows it (never the token itself). */
export interface AccessToken {
  id: string;
  name: string;
  /** the token's first characters, to tell tokens apart */
  prefix: string;
  scopes: TokenScope[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  lastUsedIp: string | null;
  expired: boolean;
}

export interface CreatedAccessToken {
  /** shown once: the server keeps only its hash */
  token: string;
  accessToken: AccessToken;
}

export async function fetchAccessTokens(): Promise<AccessToken[]> {
  const body = await api.get('account/tokens', { retry: 0 }).json<{ success: true; tokens: AccessToken[] }>();
  return body.tokens;
}

export async function createAccessToken(input: { name: string; scopes: TokenScope[]; expiresAt: string | null }): Promise<CreatedAccessToken> {
  const body = await api.post('account/tokens', { json: input, retry: 0 }).json<{ success: true } & CreatedAccessToken>();
  return { token: body.token, accessToken: body.accessToken };
}

export async function revokeAccessToken(id: string): Promise<void> {
  await api.delete(`account/tokens/${encodeURIComponent(id)}`, { retry: 0 });
}
