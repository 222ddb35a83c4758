import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson } from '../support/api.ts';
import { spawnService, stopProcesses } from '../support/service-process.ts';
import { type Stack, startStack } from '../support/stack.ts';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

// A local identity provider: its JWKS over HTTP, and tokens signed with its private key.
const ISSUER = 'https://login.platform.test/';
const AUDIENCE = 'quill-on-platform';
let stack: Stack;
let jwks: Server;
let jwksUrl: string;
let signingKey: PrivateKey;
let outsiderKey: PrivateKey;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  signingKey = pair.privateKey;
  outsiderKey = (await generateKeyPair('ES256')).privateKey;
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'platform-1', alg: 'ES256', use: 'sig' };
  jwks = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 },
    env: {
      AUTH_JWKS_URL: jwksUrl,
      AUTH_JWKS_ISSUER: ISSUER,
      AUTH_JWKS_AUDIENCE: AUDIENCE,
      AUTH_JWKS_MAX_LIFETIME_S: '3600',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => jwks?.close(resolve));
});

const now = () => Math.floor(Date.now() / 1000);
function providerToken(
  claims: JWTPayload,
  options: { key?: PrivateKey; kid?: string; alg?: string } = {},
): Promise<string> {
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 600, ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? 'platform-1' })
    .sign(options.key ?? signingKey);
}
const quotaWith = async (token: string, base = stack.gateways[0]!) => getJson(base, '/quota', token);

describe('tokens from an external identity provider (JWKS)', () => {
  it('are accepted, and the account becomes one Quill user on first sign-in', async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const token = await providerToken({ sub: subject, name: '林晚' });
    expect((await quotaWith(token)).status).toBe(200);
    expect((await quotaWith(await providerToken({ sub: subject }))).status).toBe(200);
    const { rows } = await stack.pool.query(
      `SELECT u.display_name, u.email FROM external_identities i JOIN users u ON u.id = i.user_id
       WHERE i.issuer = $1 AND i.subject = $2`,
      [ISSUER, subject],
    );
    expect(rows).toEqual([{ display_name: '林晚', email: expect.stringMatching(/@external\.invalid$/) }]);
  });

  it('are refused with 401 when forged, misaddressed, unbounded or not storable', async () => {
    const sub = `user-${crypto.randomUUID()}`;
    const cases: Record<string, Promise<string>> = {
      'signed by another key': providerToken({ sub }, { key: outsiderKey }),
      'an unknown kid': providerToken({ sub }, { key: outsiderKey, kid: 'platform-2' }),
      'for another audience': providerToken({ sub, aud: 'someone-else' }),
      'without exp': providerToken({ sub, exp: undefined }),
      'without sub': providerToken({}),
      'living longer than the maximum': providerToken({ sub, exp: now() + 7200 }),
      expired: providerToken({ sub, iat: now() - 120, exp: now() - 60 }),
      'a NUL in sub': providerToken({ sub: 'a\u0000b' }),
      // HS256 keyed with the issuer's name: algorithm confusion must not work.
      'HS256 claiming the issuer': new SignJWT({
        sub,
        iss: ISSUER,
        aud: AUDIENCE,
        iat: now(),
        exp: now() + 60,
      })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode('quill-local-development-secret')),
    };
    for (const [name, token] of Object.entries(cases)) {
      const response = await quotaWith(await token);
      expect(response.status, name).toBe(401);
      expect(response.body.error.code, name).toBe('unauthorized');
    }
    // The gateway's own tokens and API keys still work next to the provider's.
    expect((await quotaWith(stack.apiKey)).status).toBe(200);
  });

  it('answer 503, not 401 or 500, while the provider key set is unreachable', async () => {
    const gateway = await spawnService('gateway', 'jwks-down', {
      ...stack.env,
      AUTH_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json',
    });
    try {
      const response = await quotaWith(await providerToken({ sub: 'anyone' }), gateway.baseUrl!);
      expect(response.status).toBe(503);
      expect(response.body.error.code).toBe('service_unavailable');
    } finally {
      await stopProcesses([gateway.child]);
    }
  });
});
