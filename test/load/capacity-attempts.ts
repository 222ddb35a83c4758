/**
 * Figure 3 as a count: `capacity.ts` run `--attempts` times, each on a fresh stack, and for every
 * level how many of the attempts that reached it held (no run failed, frame p99 within the
 * limit), with each attempt's frame and token p99 and the whole machine's CPU per streamed token.
 *
 * On the shared 2-core machine one capacity run is one draw: at 400–500 runs the machine is at
 * 1.7–1.9 of its cores, and the same code's machine CPU per token moves 10–20 % between runs (the
 * fake LLM's too, whose work per token does not change), so one level holds in one run and not in
 * the next. An attempt that printed no result counts as one that held nothing. Before each attempt this waits until the machine is quiet, for at most `--max-wait-s`:
 * its CPU idle for `--quiet` of three seconds (one attempt's clean-up does not land in the next)
 * and its one-minute load average down to `--rest-load`, so that every attempt starts as the
 * first one did. Each attempt prints the idle share and the load it started at.
 *
 * `--writers` is capacity.ts's: how many writer processes carry the runs.
 *
 *   node test/load/capacity-attempts.ts [--attempts 4] [--levels 400,500] [--writers 1] [--quiet 0.9] [--rest-load 0.6] [--max-wait-s 300] [--env KEY=VALUE]
 */
import { parseArgs } from 'node:util';
import { type CapacityRun, idleShare, spread, summarizeAttempts } from './support/attempts.ts';
import { runBenchScript } from './support/bench-script.ts';
import { loadAverage, machineTicks } from './support/proc.ts';
import { rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    attempts: { type: 'string', default: '4' },
    levels: { type: 'string', default: '400,500' },
    'limit-ms': { type: 'string', default: '100' },
    writers: { type: 'string', default: '1' },
    quiet: { type: 'string', default: '0.9' },
    'rest-load': { type: 'string', default: '0.6' },
    'max-wait-s': { type: 'string', default: '300' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const attempts = Number(values.attempts);
const levels = values.levels.split(',').map(Number);
const quiet = Number(values.quiet);
const restLoad = Number(values['rest-load']);
const maxWaitMs = Number(values['max-wait-s']) * 1000;

/**
 * Waits until the machine's CPU was idle at least `quiet` of three seconds and its load average
 * is down to `restLoad`, or the wait is over; returns the idle share of the last three seconds.
 */
async function quietMachine(): Promise<number> {
  const giveUpAt = performance.now() + maxWaitMs;
  for (;;) {
    const before = machineTicks();
    await sleep(3000);
    const idle = idleShare(before, machineTicks());
    if ((idle >= quiet && loadAverage() <= restLoad) || performance.now() >= giveUpAt) return idle;
  }
}

/** One capacity run, its output echoed; its JSON line, or undefined when it printed none. */
async function capacityRun(): Promise<CapacityRun | undefined> {
  const args = ['--levels', values.levels, '--limit-ms', values['limit-ms'], '--writers', values.writers];
  for (const pair of values.env) args.push('--env', pair);
  const { result } = await runBenchScript('capacity', args);
  return (result as { bench?: string } | undefined)?.bench === 'capacity'
    ? (result as CapacityRun)
    : undefined;
}

const runs: CapacityRun[] = [];
const starts: Array<{ attempt: number; idle_share: number; load_average: number }> = [];
for (let attempt = 1; attempt <= attempts; attempt++) {
  const idle = await quietMachine();
  starts.push({ attempt, idle_share: idle, load_average: loadAverage() });
  console.log(
    `\n=== attempt ${attempt} of ${attempts} (machine idle ${(idle * 100).toFixed(0)} % over the 3 s before, load average ${loadAverage()})`,
  );
  const run = await capacityRun();
  if (run) runs.push(run);
  else console.log(`attempt ${attempt} printed no result`);
}

const summary = summarizeAttempts(levels, runs);
const missing = attempts - runs.length;
console.log(
  `\ncapacity over ${attempts} attempts with ${values.writers} writer process(es) (each on a fresh stack${missing > 0 ? `; ${missing} printed no result and held nothing` : ''}):`,
);
console.log(
  table([
    ['runs', 'held', 'reached', 'frame p99 (ms)', 'token p99 (ms)', 'machine µs/token', 'load'],
    ...summary.map((level) => [
      level.level,
      `${level.held} of ${attempts}`,
      level.measured,
      spread(level.frameP99Ms),
      spread(level.tokenP99Ms),
      spread(level.machineUsPerToken),
      spread(level.loads, 1),
    ]),
  ]),
);
console.log(
  JSON.stringify(
    rounded({
      bench: 'capacity-attempts',
      attempts,
      writers: Number(values.writers),
      without_result: missing,
      starts,
      levels: summary.map((level) => ({
        level: level.level,
        measured: level.measured,
        held: level.held,
        frame_p99_ms: level.frameP99Ms,
        token_p99_ms: level.tokenP99Ms,
        machine_us_per_token: level.machineUsPerToken,
        load_average: level.loads,
      })),
    }),
  ),
);
