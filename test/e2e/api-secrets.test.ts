import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, postJson } from '../support/api.ts';
import { spawnService, stopProcesses } from '../support/service-process.ts';
import { type Stack, startStack } from '../support/stack.ts';

// A gateway as the shipped deploy files run it: NODE_ENV=production with real secrets.
const SECRET = 'Zq4-Ls9Xw2Pe7Rk1Vn6Tb3Ym8Hc5Jd0Fg_Ua';
const TTL_S = 600;
const GATEWAY_ONLY = { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 } as const;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    replicas: GATEWAY_ONLY,
    env: {
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: SECRET,
      AUTH_JWT_TTL_S: String(TTL_S),
      LLM_PRIMARY_API_KEY: 'sk-test-primary',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
});

async function startFails(env: Record<string, string>): Promise<string> {
  try {
    const service = await spawnService('gateway', `refused-${Date.now()}`, { ...stack.env, ...env });
    await stopProcesses([service.child]);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the gateway started');
}

describe('production start-up', () => {
  it('refuses to start on the public default JWT secret or the fake LLM key, naming them', async () => {
    const output = await startFails({ AUTH_JWT_SECRET: '', LLM_PRIMARY_API_KEY: '' });
    expect(output).toMatch(/exited with 1/);
    expect(output).toContain('AUTH_JWT_SECRET: required in production');
    expect(output).toContain('LLM_PRIMARY_API_KEY: required in production');
  });

  it('refuses a weak JWT secret and a backup provider without its key', async () => {
    const output = await startFails({
      AUTH_JWT_SECRET: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      LLM_BACKUP_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    expect(output).toContain('AUTH_JWT_SECRET: too weak for production');
    expect(output).toContain('LLM_BACKUP_API_KEY: required in production');
  });
});

describe('access tokens', () => {
  const key = new TextEncoder().encode(SECRET);
  const sign = (claims: { iss?: string; aud?: string; exp?: number; iat?: number }, secret = key) => {
    let jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(stack.userId);
    if (claims.iss) jwt = jwt.setIssuer(claims.iss);
    if (claims.aud) jwt = jwt.setAudience(claims.aud);
    if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(secret);
  };
  const now = () => Math.floor(Date.now() / 1000);
  const valid = () => ({ iss: 'quill', aud: 'quill-api', iat: now(), exp: now() + 60 });
  const statusWith = async (token: string) => (await getJson(stack.gateways[0]!, '/quota', token)).status;

  it('accepts a token minted from an API key, for its stated lifetime', async () => {
    const minted = await postJson(stack.gateways[0]!, '/auth/token', undefined, { api_key: stack.apiKey });
    expect(minted.status).toBe(200);
    expect(minted.body.expires_in).toBe(TTL_S);
    expect(await statusWith(minted.body.access_token)).toBe(200);
    expect(await statusWith(await sign(valid()))).toBe(200);
  });

  it('refuses forged, unbounded and misaddressed tokens with 401', async () => {
    const cases: Record<string, Promise<string>> = {
      'signed with the public default': sign(
        valid(),
        new TextEncoder().encode('quill-local-development-secret'),
      ),
      'without exp': sign({ ...valid(), exp: undefined }),
      'without iat': sign({ ...valid(), iat: undefined }),
      'living longer than AUTH_JWT_TTL_S': sign({ ...valid(), exp: now() + TTL_S + 3600 }),
      expired: sign({ ...valid(), iat: now() - 120, exp: now() - 60 }),
      'issued in the future': sign({ ...valid(), iat: now() + 3600, exp: now() + 3660 }),
      'for another audience': sign({ ...valid(), aud: 'someone-else' }),
      'from another issuer': sign({ ...valid(), iss: 'evil' }),
    };
    for (const [name, token] of Object.entries(cases)) {
      expect(await statusWith(await token), name).toBe(401);
    }
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: stack.userId, ...valid() }),
    ).toString('base64url')}.`;
    expect(await statusWith(unsigned)).toBe(401);
  });
});
