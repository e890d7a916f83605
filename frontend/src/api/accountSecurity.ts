import { api } from './client';

interface MessageAnswer {
  success: true;
  message: string;
}

export async function requestPasswordReset(email: string): Promise<string> {
  return (await api.post('auth/password-reset', { json: { email } }).json<MessageAnswer>()).message;
}

export async function confirmPasswordReset(token: string, password: string): Promise<string> {
  return (await api.post('auth/password-reset/confirm', { json: { token, password } }).json<MessageAnswer>()).message;
}

export async function verifyEmail(token: string): Promise<{ message: string; changedEmail: boolean }> {
  return api.post('auth/verify-email', { json: { token } }).json<MessageAnswer & { changedEmail: boolean }>();
}

export async function resendVerification(): Promise<string> {
  return (await api.post('account/verification', { json: {} }).json<MessageAnswer>()).message;
}

export async function changeEmail(email: string, password: string): Promise<string> {
  return (await api.post('account/email', { json: { email, password } }).json<MessageAnswer>()).message;
}

export interface AccountSession {
  id: string;
  device: string;
  userAgent: string | null;
  ipAddress: string | null;
  authenticatedWith: 'password' | 'sign_up' | 'password_reset' | 'two_factor' | 'passkey' | 'single_sign_on';
  createdAt: string;
  lastSeenAt: string;
  current: boolean;
}

export async function fetchSessions(): Promise<AccountSession[]> {
  return (await api.get('account/sessions').json<{ success: true; sessions: AccountSession[] }>()).sessions;
}

export async function endSession(id: string): Promise<void> {
  await api.delete(`account/sessions/${encodeURIComponent(id)}`);
}

export async function endOtherSessions(): Promise<number> {
  return (await api.post('account/sessions/end-others', { json: {} }).json<{ success: true; ended: number }>()).ended;
}
