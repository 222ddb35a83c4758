/**
 * Calls `call` on consecutive slices of `items`, at most `size` long, one after another, and
 * joins what they return: a script over many runs stays one bounded call on the server each.
 */
export async function inBatches<T, R>(
  items: readonly T[],
  size: number,
  call: (batch: readonly T[]) => Promise<readonly R[]>,
): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    results.push(...(await call(items.slice(start, start + size))));
  }
  return results;
}
