import { startAuthentication, startRegistration, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import type { SecondFactorMethod } from '../../../domain/twoFactor';
import { api } from './client';

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  backedUp: boolean;
}

export interface TwoFactorStatus {
  enabled: boolean;
  totp: boolean;
  passkeys: PasskeyView[];
  recoveryCodesLeft: number;
  /** until when this session may turn factors off without confirming again */
  confirmedUntil: string | null;
}

export interface TotpSetup {
  secret: string;
  otpauthUrl: string;
  /** a PNG data URL made by the server */
  qrCode: string;
}

export type CodeProof = { method: 'totp' | 'recovery'; code: string };
type PasskeyProof = { method: 'passkey'; challengeId: string; response: unknown };

interface Challenge<T> {
  challengeId: string;
  options: T;
}

export async function fetchTwoFactor(): Promise<TwoFactorStatus> {
  return (await api.get('account/two-factor').json<{ twoFactor: TwoFactorStatus }>()).twoFactor;
}

export async function beginTotpSetup(): Promise<TotpSetup> {
  return api.post('account/two-factor/totp', { json: {} }).json<TotpSetup>();
}

export async function confirmTotpSetup(code: string): Promise<string[] | null> {
  return (await api.post('account/two-factor/totp/confirm', { json: { code } }).json<{ recoveryCodes: string[] | null }>()).recoveryCodes;
}

export async function removeTotp(): Promise<void> {
  await api.delete('account/two-factor/totp');
}

export async function regenerateRecoveryCodes(): Promise<string[]> {
  return (await api.post('account/two-factor/recovery-codes', { json: {} }).json<{ recoveryCodes: string[] }>()).recoveryCodes;
}

/** Makes a passkey in the browser (the authenticator asks the person) and keeps it under `name`. */
export async function addPasskey(name: string): Promise<{ passkey: PasskeyView; recoveryCodes: string[] | null }> {
  const { challengeId, options } = await api.post('account/two-factor/passkeys/options', { json: {} }).json<Challenge<PublicKeyCredentialCreationOptionsJSON>>();
  const response = await startRegistration({ optionsJSON: options });
  return api.post('account/two-factor/passkeys', { json: { challengeId, name, response } }).json<{ passkey: PasskeyView; recoveryCodes: string[] | null }>();
}

export async function renamePasskey(id: string, name: string): Promise<void> {
  await api.patch(`account/two-factor/passkeys/${encodeURIComponent(id)}`, { json: { name } });
}

export async function removePasskey(id: string): Promise<void> {
  await api.delete(`account/two-factor/passkeys/${encodeURIComponent(id)}`);
}

async function passkeyProof(optionsPath: string, body: object): Promise<PasskeyProof> {
  const { challengeId, options } = await api.post(optionsPath, { json: body }).json<Challenge<PublicKeyCredentialRequestOptionsJSON>>();
  const response = await startAuthentication({ optionsJSON: options });
  return { method: 'passkey', challengeId, response };
}

/** "Confirm it's you" with a code, or with a passkey (`'passkey'`). */
export async function confirmSecondFactor(proof: CodeProof | 'passkey'): Promise<void> {
  const sent = proof === 'passkey' ? await passkeyProof('account/two-factor/confirm/options', {}) : proof;
  await api.post('account/two-factor/confirm', { json: { proof: sent } });
}

export interface SecondStep {
  pendingToken: string;
  methods: SecondFactorMethod[];
}

/** The second step of a sign-in: a code, or one of the account's passkeys. */
export async function completeSecondStep(pendingToken: string, proof: CodeProof | 'passkey'): Promise<void> {
  const sent = proof === 'passkey' ? await passkeyProof('auth/passkey/options', { pendingToken }) : proof;
  await api.post('auth/second-factor', { json: { pendingToken, proof: sent } });
}

/** "Sign in with a passkey": no e-mail, no password. */
export async function signInWithPasskey(): Promise<void> {
  const { challengeId, options } = await api.post('auth/passkey/options', { json: {} }).json<Challenge<PublicKeyCredentialRequestOptionsJSON>>();
  const response = await startAuthentication({ optionsJSON: options });
  await api.post('auth/passkey', { json: { challengeId, response } });
}
