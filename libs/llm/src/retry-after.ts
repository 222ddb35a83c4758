/**
 * How long a provider asked us to wait before the next request (docs/agent-behaviour.md
 * "Provider requests"): `retry-after-ms` (OpenAI's millisecond form) first, else `retry-after`
 * as delta-seconds or an HTTP-date. Undefined when neither is present or readable.
 */
export function retryAfterMs(headers: HeaderSource | undefined, nowMs: number): number | undefined {
  if (!headers) return undefined;
  const millis = read(headers, 'retry-after-ms');
  if (millis !== undefined && /^\d+(\.\d+)?$/.test(millis.trim())) return Number(millis);
  const value = read(headers, 'retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export type HeaderSource = Headers | Readonly<Record<string, string | null | undefined>>;

function read(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  return (headers as Record<string, string | null | undefined>)[name] ?? undefined;
}

/**
 * The wait before retrying the same provider: what it asked for, or `defaultMs` when it said
 * nothing. Undefined when it asked for longer than `capMs`: waiting less would send a request it
 * said it would refuse, and waiting that long would hold the author's run, so the error stands.
 */
export function sameProviderRetryDelay(
  requestedMs: number | undefined,
  settings: { defaultMs: number; capMs: number },
): number | undefined {
  const delay = requestedMs ?? settings.defaultMs;
  return delay > settings.capMs ? undefined : delay;
}
