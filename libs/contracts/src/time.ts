// Microsecond timestamps (docs/agent-behaviour.md 坑 8): two frames or messages written in the same millisecond
// must still sort in the order they happened.
//
// Kept as plain numbers: microseconds since the epoch stay exact integers until 2^53 (the year
// 2255), and a worker stamps every frame it streams (docs/decisions/0034-per-frame-work-off-the-token-path.md),
// where BigInt arithmetic and a Date per stamp were a visible share of the writer's CPU.
const originMicros = Math.round(performance.timeOrigin * 1000);
let lastMicros = 0;

function nextMicros(): number {
  let micros = originMicros + Math.round(performance.now() * 1000);
  // Strictly increasing within a process, so equal stamps never reorder.
  if (micros <= lastMicros) micros = lastMicros + 1;
  lastMicros = micros;
  return micros;
}

export function nowMicros(): bigint {
  return BigInt(nextMicros());
}

// The ISO text up to the second changes once a second: made once, not per stamp.
let prefixSecond = Number.NaN;
let prefix = '';

function isoOfMicros(micros: number): string {
  const second = Math.floor(micros / 1_000_000);
  if (second !== prefixSecond) {
    prefixSecond = second;
    prefix = new Date(second * 1000).toISOString().slice(0, 19);
  }
  return `${prefix}.${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
}

export function microsToIso(micros: bigint): string {
  if (micros >= 0n && micros <= BigInt(Number.MAX_SAFE_INTEGER)) return isoOfMicros(Number(micros));
  const millis = micros / 1000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0');
  return `${new Date(Number(millis)).toISOString().slice(0, 19)}.${fraction}Z`;
}

export function isoNow(): string {
  return isoOfMicros(nextMicros());
}
