/**
 * One timer for the token pacing of every open stream. At hundreds of streams of 20 tokens/s,
 * a timer, a promise and an abort listener per token per stream made the fake itself one of the
 * biggest CPU users of a capacity benchmark, taking the CPU from the system it stands in front
 * of. Streams waiting for the same millisecond share one entry; one timer is armed for the
 * earliest. Waits are short (one token's interval), so an aborted stream simply notices at its
 * next write.
 */
const due = new Map<number, Array<() => void>>();
let timer: NodeJS.Timeout | undefined;
let armedFor = Number.POSITIVE_INFINITY;

/** Resolves at `at` (a `performance.now()` time), give or take the timer's own lateness. */
export function waitUntil(at: number): Promise<void> {
  const key = Math.ceil(at);
  return new Promise((resolve) => {
    const waiting = due.get(key);
    if (waiting) waiting.push(resolve);
    else due.set(key, [resolve]);
    arm(key);
  });
}

function arm(key: number): void {
  if (timer && key >= armedFor) return;
  clearTimeout(timer);
  armedFor = key;
  timer = setTimeout(fire, Math.max(0, key - performance.now()));
}

function fire(): void {
  timer = undefined;
  armedFor = Number.POSITIVE_INFINITY;
  const now = performance.now();
  let earliest = Number.POSITIVE_INFINITY;
  for (const [key, waiting] of due) {
    if (key <= now) {
      due.delete(key);
      for (const resolve of waiting) resolve();
    } else if (key < earliest) earliest = key;
  }
  if (earliest !== Number.POSITIVE_INFINITY) arm(earliest);
}
