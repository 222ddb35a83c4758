import { errors, jwtVerify, SignJWT } from 'jose';

export interface TokenService {
  issue(userId: string): Promise<{ token: string; expiresIn: number }>;
  /** The user id of a valid, unexpired token; undefined otherwise. */
  verify(token: string): Promise<string | undefined>;
}

const ISSUER = 'quill';
const AUDIENCE = 'quill-api';

/**
 * Short-lived HS256 access tokens minted from an API key, so a browser never has to hold the
 * long-lived key. Verified statelessly by every gateway replica.
 */
export function createTokenService(secret: string, ttlSeconds: number): TokenService {
  const key = new TextEncoder().encode(secret);
  return {
    async issue(userId) {
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(userId)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(key);
      return { token, expiresIn: ttlSeconds };
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: ISSUER,
          audience: AUDIENCE,
          algorithms: ['HS256'],
        });
        return typeof payload.sub === 'string' ? payload.sub : undefined;
      } catch (error) {
        if (error instanceof errors.JOSEError) return undefined;
        throw error;
      }
    },
  };
}
