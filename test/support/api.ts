/** Small JSON helpers for calling the gateway as a client would. */

// Tests inspect response bodies ad hoc; the schemas they check against live in the assertions.
// biome-ignore lint/suspicious/noExplicitAny: see above
type Json = any;
export async function postJson(
  baseUrl: string,
  path: string,
  apiKey: string | undefined,
  body: unknown,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const response = await fetch(`${baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: await response.json().catch(() => undefined),
    headers: response.headers,
  };
}

export async function getJson(
  baseUrl: string,
  path: string,
  apiKey: string | undefined,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${baseUrl}/api/v1${path}`, {
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

/** Polls until `check` returns a value (not undefined) or the timeout passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A long, slow reply: keeps a writer step busy for `seconds` at 20 tokens a second. */
export function slowReply(seconds: number): { text: string; tokens_per_second: number } {
  return { text: '雨'.repeat(seconds * 20), tokens_per_second: 20 };
}
