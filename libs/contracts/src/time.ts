// Microsecond timestamps (docs/agent-behaviour.md 坑 8): two frames or messages written in the same millisecond
// must still sort in the order they happened.
const originMicros = BigInt(Math.round(performance.timeOrigin * 1000));
let lastMicros = 0n;

export function nowMicros(): bigint {
  let micros = originMicros + BigInt(Math.round(performance.now() * 1000));
  // Strictly increasing within a process, so equal stamps never reorder.
  if (micros <= lastMicros) micros = lastMicros + 1n;
  lastMicros = micros;
  return micros;
}

export function microsToIso(micros: bigint): string {
  const millis = micros / 1000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0');
  return `${new Date(Number(millis)).toISOString().slice(0, 19)}.${fraction}Z`;
}

export function isoNow(): string {
  return microsToIso(nowMicros());
}
