import type { User } from '@quill/db';
import { createApiKey, createUser } from '@quill/db/gateway';
import type { Stack } from './stack.ts';

// Tests read response bodies ad hoc; what they expect is in their assertions.
// biome-ignore lint/suspicious/noExplicitAny: see above
type Json = any;
export interface Reply {
  status: number;
  body: Json;
  headers: Headers;
}
export type Call = (method: string, path: string, body?: unknown) => Promise<Reply>;

/** JSON calls to a gateway under /api/v1 with one bearer, as an author's client makes them. */
export function caller(baseUrl: string, key: string): Call {
  return async (method, path, body) => {
    const response = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const isJson = response.headers.get('content-type')?.startsWith('application/json');
    return {
      status: response.status,
      body: text && isJson ? JSON.parse(text) : text,
      headers: response.headers,
    };
  };
}

/** A fresh user with an API key, and a caller acting as them. */
export async function newUser(
  stack: Stack,
  label: string,
  role: 'user' | 'admin' = 'user',
): Promise<{ user: User; key: string; call: Call }> {
  const user = await createUser(stack.pool, {
    email: `${label}-${crypto.randomUUID()}@example.com`,
    displayName: label,
    role,
  });
  const { key } = await createApiKey(stack.pool, user.id, 'test');
  return { user, key, call: caller(stack.gateways[0]!, key) };
}
