/**
 * What nats.js's requests cost the client with and without the request settle fix
 * (libs/bus/src/request-settle-fix.ts, docs/decisions/0062): core request/reply pairs and
 * JetStream publishes (each one a request), 64 in flight, on a connection made as `connectBus`
 * makes it (`noAsyncTraces`). The fix replaces a prototype's methods for the whole process and
 * cannot be taken back, so each variant runs in a child process of its own, alternated
 * `--rounds` times; a round is a warm-up pass and a measured pass. Prints the client's CPU per
 * request (the child's own, responder included for request/reply) with the load average, and
 * one JSON line.
 *
 *   node test/load/request-settle.ts [--rounds 3] [--requests 20000]
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { testUrls, uniqueName } from '../support/urls.ts';
import { loadAverage } from './support/proc.ts';
import { rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    requests: { type: 'string', default: '20000' },
    variant: { type: 'string' },
  },
});
const requests = Number(values.requests);
const IN_FLIGHT = 64;

type Variant = 'stock' | 'fixed';
interface Measured {
  request_reply_us: number;
  js_publish_us: number;
}

async function measureVariant(variant: Variant): Promise<Measured> {
  if (variant === 'fixed') {
    const { installRequestSettleFix } = await import('../../libs/bus/src/request-settle-fix.ts');
    if (!installRequestSettleFix()) throw new Error('the request settle fix does not apply to this nats.js');
  }
  const nats = await connect({ servers: testUrls.nats, name: 'bench-request-settle', noAsyncTraces: true });
  const name = uniqueName('BENCH_RQ').toUpperCase();
  const jsm = await jetstreamManager(nats);
  const js = jetstream(nats);
  await jsm.streams.add({
    name,
    subjects: [`${name}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.Memory,
  });
  const echo = `${name}.echo`;
  const responder = nats.subscribe(echo, {
    callback: (_error, message) => {
      message.respond(message.data);
    },
  });
  await nats.flush();
  let sequence = 0;
  const pipelined = async (send: () => Promise<unknown>) => {
    const inFlight = new Set<Promise<unknown>>();
    for (let index = 0; index < requests; index++) {
      const sent = send();
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent));
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  };
  const cpuPerRequest = async (send: () => Promise<unknown>) => {
    await pipelined(send);
    const before = process.cpuUsage();
    await pipelined(send);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / requests;
  };
  try {
    const request_reply_us = await cpuPerRequest(() => nats.request(echo, 'ping', { timeout: 10_000 }));
    const js_publish_us = await cpuPerRequest(() => {
      const h = headers();
      h.set('Nats-Msg-Id', `m${++sequence}`);
      return js.publish(`${name}.run.r1.events`, 'frame', { headers: h });
    });
    return { request_reply_us, js_publish_us };
  } finally {
    responder.unsubscribe();
    await jsm.streams.delete(name).catch(() => undefined);
    await nats.close();
  }
}

if (values.variant) {
  console.log(JSON.stringify(await measureVariant(values.variant as Variant)));
} else {
  const results: Record<Variant, Measured[]> = { stock: [], fixed: [] };
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const variant of ['stock', 'fixed'] as const) {
      const output = execFileSync(
        process.execPath,
        [process.argv[1]!, '--variant', variant, '--requests', String(requests)],
        { encoding: 'utf8' },
      );
      results[variant].push(JSON.parse(output.trim().split('\n').at(-1)!) as Measured);
    }
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  const row = (variant: Variant, key: keyof Measured) => [
    variant,
    key === 'request_reply_us' ? 'request/reply' : 'JetStream publish',
    results[variant].map((result) => rounded(result[key], 1)).join(' / '),
    rounded(median(results[variant].map((result) => result[key])), 1),
  ];
  console.log(
    `nats.js requests, ${requests} per pass, ${IN_FLIGHT} in flight, client CPU µs per request (load ${loadAverage()})`,
  );
  console.log(
    table([
      ['variant', 'request', 'rounds', 'median'],
      row('stock', 'request_reply_us'),
      row('fixed', 'request_reply_us'),
      row('stock', 'js_publish_us'),
      row('fixed', 'js_publish_us'),
    ]),
  );
  console.log(JSON.stringify({ bench: 'request-settle', requests, load_average: loadAverage(), results }));
}
