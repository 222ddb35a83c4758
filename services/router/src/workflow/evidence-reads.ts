/**
 * The review evidence's reads have a time limit (docs/agent-behaviour.md 「送审证据」): a slow
 * database delays the reviewer by at most this much, and what was not read by then is named as
 * unread rather than waited for.
 */
export const EVIDENCE_READ_LIMIT_MS = 10_000;

export interface TimedReads<T> {
  /** Reads that finished in time, by key. */
  done: Map<string, T>;
  /** Keys whose read failed or was still running at the limit, in the order asked. */
  late: string[];
}

export async function readWithin<T>(
  reads: ReadonlyArray<{ key: string; read: () => Promise<T> }>,
  limitMs: number = EVIDENCE_READ_LIMIT_MS,
): Promise<TimedReads<T>> {
  const done = new Map<string, T>();
  const all = Promise.allSettled(
    reads.map(async ({ key, read }) => {
      done.set(key, await read());
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, limitMs);
  });
  await Promise.race([all, limit]);
  clearTimeout(timer);
  // A late read may still finish later; the snapshot taken now is what the evidence uses.
  const settled = new Map(done);
  return { done: settled, late: reads.map((read) => read.key).filter((key) => !settled.has(key)) };
}
