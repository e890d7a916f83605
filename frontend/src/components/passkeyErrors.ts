import { apiErrorMessage } from '../api/client';

/** What to say when a passkey ceremony fails: the person cancelled or the browser refused, or the server's answer. */
export function passkeyErrorMessage(error: unknown): string {
  if (error instanceof Error && (error.name === 'NotAllowedError' || error.name === 'AbortError')) return 'The passkey request was cancelled or timed out. Try again.';
  if (error instanceof Error && error.name === 'InvalidStateError') return 'This passkey is already registered.';
  return apiErrorMessage(error, error instanceof Error && error.message ? error.message : 'Something went wrong. Please try again.');
}

/** Whether this browser can use passkeys at all. */
export function passkeysSupported(): boolean {
  return typeof window !== 'undefined' && typeof window.PublicKeyCredential === 'function';
}
