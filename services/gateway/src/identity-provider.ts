import { QuillError, storableText } from '@quill/contracts';
import type { ExternalIdentity } from '@quill/db';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import { z } from 'zod';

export interface IdentityProviderSettings {
  jwksUrl: string;
  issuer: string;
  audience: string;
  maxLifetimeSeconds: number;
}

export interface IdentityProvider {
  readonly issuer: string;
  /** The provider account a token proves, undefined for an invalid token; 503 when the JWKS cannot be read. */
  verify(token: string): Promise<ExternalIdentity | undefined>;
}

// Asymmetric only: a provider's public keys must never be usable as an HMAC secret.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_S = 5;
// Claims that go to Postgres: storable text, bounded.
const Claims = z.object({
  sub: storableText().min(1).max(255),
  name: storableText().max(200).optional().catch(undefined),
  email: storableText().max(320).optional().catch(undefined),
});

/**
 * Tokens from an external identity provider (a hosting platform's login), checked against its
 * JWKS (fetched and cached by jose, refetched for an unknown `kid`): signature, `iss`, `aud`,
 * `exp`, `iat`, and a lifetime within AUTH_JWKS_MAX_LIFETIME_S.
 */
export function createIdentityProvider(settings: IdentityProviderSettings): IdentityProvider {
  const keys = createRemoteJWKSet(new URL(settings.jwksUrl), {
    timeoutDuration: 5000,
    cooldownDuration: 30_000,
    cacheMaxAge: 10 * 60_000,
  });
  return {
    issuer: settings.issuer,
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: ALGORITHMS,
          requiredClaims: ['exp', 'iat', 'sub'],
          clockTolerance: CLOCK_TOLERANCE_S,
        });
        if (payload.exp! - payload.iat! > settings.maxLifetimeSeconds) return undefined;
        if (payload.iat! > Date.now() / 1000 + CLOCK_TOLERANCE_S) return undefined;
        const claims = Claims.safeParse(payload);
        if (!claims.success) return undefined;
        return {
          issuer: settings.issuer,
          subject: claims.data.sub,
          displayName: claims.data.name || claims.data.email || claims.data.sub,
        };
      } catch (error) {
        // The provider's key set is unreachable or broken: not the caller's fault.
        if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
          throw new QuillError('service_unavailable', { cause: error });
        }
        if (error instanceof errors.JOSEError) return undefined;
        throw new QuillError('service_unavailable', { cause: error });
      }
    },
  };
}
