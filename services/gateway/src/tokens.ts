import type { ExternalIdentity } from '@quill/db';
import { decodeJwt, errors, jwtVerify, SignJWT } from 'jose';
import type { IdentityProvider } from './identity-provider.ts';

export type VerifiedToken =
  | { readonly kind: 'local'; readonly userId: string }
  | { readonly kind: 'external'; readonly identity: ExternalIdentity };

export interface TokenService {
  issue(userId: string): Promise<{ token: string; expiresIn: number }>;
  /** Who a valid, unexpired token stands for; undefined otherwise. */
  verify(token: string): Promise<VerifiedToken | undefined>;
}

export const TOKEN_ISSUER = 'quill';
export const TOKEN_AUDIENCE = 'quill-api';
// Replicas' clocks drift a little; more than this is a token from the future.
const CLOCK_TOLERANCE_S = 5;

/**
 * Short-lived HS256 access tokens minted from an API key, so a browser never has to hold the
 * long-lived key. Verified statelessly by every gateway replica. A token must say who issued it
 * for whom (`iss`, `aud`), when (`iat`) and until when (`exp`), and may not claim to live longer
 * than `ttlSeconds` (AUTH_JWT_TTL_S): a leaked signing key or a forged long-lived token then
 * cannot outlast one token lifetime once the key is rotated.
 */
export function createTokenService(
  secret: string,
  ttlSeconds: number,
  provider?: IdentityProvider,
): TokenService {
  const key = new TextEncoder().encode(secret);
  return {
    async issue(userId) {
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(key);
      return { token, expiresIn: ttlSeconds };
    },
    async verify(token) {
      // The unverified `iss` only picks the verifier; each then checks everything itself.
      if (provider && issuerOf(token) === provider.issuer) {
        const identity = await provider.verify(token);
        return identity ? { kind: 'external', identity } : undefined;
      }
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: TOKEN_ISSUER,
          audience: TOKEN_AUDIENCE,
          algorithms: ['HS256'],
          requiredClaims: ['exp', 'iat', 'sub'],
          maxTokenAge: ttlSeconds + CLOCK_TOLERANCE_S,
          clockTolerance: CLOCK_TOLERANCE_S,
        });
        if (payload.exp! - payload.iat! > ttlSeconds) return undefined;
        if (payload.iat! > Date.now() / 1000 + CLOCK_TOLERANCE_S) return undefined;
        return typeof payload.sub === 'string' ? { kind: 'local', userId: payload.sub } : undefined;
      } catch (error) {
        if (error instanceof errors.JOSEError) return undefined;
        throw error;
      }
    },
  };
}

function issuerOf(token: string): string | undefined {
  try {
    return decodeJwt(token).iss;
  } catch (error) {
    if (error instanceof errors.JOSEError) return undefined;
    throw error;
  }
}
