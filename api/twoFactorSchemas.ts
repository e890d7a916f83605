/**
 * The request and answer shapes two-factor sign-in shares between the sign-in routes (api/routes/auth.ts) and
 * Account → Security's (api/routes/twoFactor.ts): a WebAuthn credential as the browser serialises it, the options
 * handed to the browser, and a proof of a second factor.
 */
import { z } from 'zod';
import { requiredString } from './validation';

const base64url = z.string().max(16_384).regex(/^[A-Za-z0-9_-]*$/, { error: 'must be base64url' });

/** A PublicKeyCredential's JSON (registration or assertion): @simplewebauthn/browser's answer, checked by the server library. */
export const credentialJson = z
  .object({
    id: base64url.min(1).max(1024),
    rawId: base64url.min(1).max(1024),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: base64url,
      attestationObject: base64url.optional(),
      authenticatorData: base64url.optional(),
      signature: base64url.optional(),
      userHandle: base64url.optional(),
      transports: z.array(z.string().max(32)).max(10).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
      publicKey: base64url.optional(),
    }),
    authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  })
  .meta({ id: 'PublicKeyCredentialJSON' });

/** PublicKeyCredentialCreationOptionsJSON / RequestOptionsJSON, as @simplewebauthn/server makes them. */
export const webAuthnOptions = z.record(z.string(), z.unknown()).meta({ id: 'WebAuthnOptions', description: 'For @simplewebauthn/browser (startRegistration / startAuthentication)' });

const code = requiredString('code').trim().min(1, { error: 'Enter the code' }).max(40);

/** A second factor: a code from the app, a recovery code, or a passkey's answer to a challenge. */
export const secondFactorProof = z
  .discriminatedUnion('method', [
    z.strictObject({ method: z.literal('totp'), code }),
    z.strictObject({ method: z.literal('recovery'), code }),
    z.strictObject({ method: z.literal('passkey'), challengeId: requiredString('challengeId').max(100), response: credentialJson }),
  ])
  .meta({ id: 'SecondFactorProof' });
