/**
 * Chaos batch: N runs through 2 gateways, 2 routers and 2 writers while a random router
 * or writer is SIGKILLed (and replaced) during the batch. Counts the runs that ended with exactly
 * one terminal frame followed by `done`. Prints a table and one JSON line.
 *
 *   node test/load/chaos-batch.ts [--runs 20] [--concurrency 4] [--kills 6]
 */
import { parseArgs } from 'node:util';
import { isTerminalFrame } from '@quill/contracts';
import { slowReply } from '../support/api.ts';
import { readStream, startRun } from '../support/sse-client.ts';
import { startStack } from '../support/stack.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    kills: { type: 'string', default: '6' },
  },
});
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const kills = Number(values.kills);

const stack = await startStack({
  replicas: { gateway: 2, router: 2, writer: 2 },
  env: {
    RUN_ACK_WAIT_S: '3',
    TASK_ACK_WAIT_S: '3',
    AGENT_RUN_WALL_CLOCK_TIMEOUT_S: '40',
    USER_MAX_CONCURRENT_RUNS: String(concurrency),
    GATEWAY_RATE_LIMIT_PER_MINUTE: '10000',
  },
});
const outcomes: Array<{ run: number; terminals: number; endedWithDone: boolean; terminal: string }> = [];
let killed = 0;
const startedAt = performance.now();
try {
  stack.fakeLlm.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: runs * 3 }, () => slowReply(2)),
  });
  let next = 0;
  const worker = async () => {
    while (next < runs) {
      const index = next++;
      const gateway = stack.gateways[index % stack.gateways.length]!;
      const response = await startRun(gateway, stack.apiKey, {
        project_id: stack.projectId,
        message: `第${index}段`,
      });
      const result = await readStream(response);
      const terminalFrames = result.frames.filter((received) => isTerminalFrame(received.frame));
      outcomes.push({
        run: index,
        terminals: terminalFrames.length,
        endedWithDone: result.frames.at(-1)?.frame.type === 'done',
        terminal:
          terminalFrames
            .map((received) => {
              const f = received.frame;
              return f.type === 'error'
                ? `error:${f.code}`
                : f.type === 'workflow_stopped'
                  ? `stopped:${f.reason}`
                  : f.type;
            })
            .join('+') || `http ${result.status}`,
      });
    }
  };
  const chaos = async () => {
    const spacing = 1500;
    for (let kill = 0; kill < kills; kill++) {
      await new Promise((resolve) => setTimeout(resolve, spacing + Math.random() * spacing));
      if (outcomes.length >= runs) break;
      const candidates = stack.services.filter(
        (service) =>
          (service.name === 'router' || service.name === 'writer') && service.child.exitCode === null,
      );
      const victim = candidates[Math.floor(Math.random() * candidates.length)]!;
      victim.child.kill('SIGKILL');
      killed++;
      await stack.startService(victim.name);
    }
  };
  await Promise.all([...Array.from({ length: concurrency }, worker), chaos()]);
} finally {
  await stack.stop();
}

const exactlyOne = outcomes.filter((outcome) => outcome.terminals === 1 && outcome.endedWithDone).length;
const byTerminal = new Map<string, number>();
for (const outcome of outcomes) byTerminal.set(outcome.terminal, (byTerminal.get(outcome.terminal) ?? 0) + 1);
console.log(
  `runs ${outcomes.length}, processes killed ${killed}, wall ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
);
console.log(`ended with exactly one terminal frame then done: ${exactlyOne}/${outcomes.length}`);
for (const [terminal, count] of byTerminal) console.log(`  ${terminal.padEnd(32)} ${count}`);
console.log(
  JSON.stringify({
    bench: 'chaos-batch',
    runs: outcomes.length,
    killed,
    exactly_one_terminal: exactlyOne,
    by_terminal: Object.fromEntries(byTerminal),
  }),
);
