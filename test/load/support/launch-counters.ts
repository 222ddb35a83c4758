import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { busNames } from '@quill/contracts';
import { scrape, sumOf } from '../../support/prometheus.ts';
import type { ConnectionCounters } from './private-nats.ts';
import { cpuMeter, namedProcessesCpuMs } from './proc.ts';
import { rounded, sleep } from './stats.ts';

/**
 * Consumers on EVENTS once the runs ended: the durable ones, and any reader's consumer still left
 * on the server (nats.js leaves an idle ordered consumer there for five minutes).
 */
export async function eventsConsumers(natsUrl: string, namespace: string): Promise<number> {
  const connection = await connect({ servers: natsUrl, name: 'bench-consumers' });
  try {
    const manager = await jetstreamManager(connection);
    return (await manager.streams.info(busNames(namespace).streams.events)).state.consumer_count;
  } finally {
    await connection.close();
  }
}

/**
 * NATS messages per launch by service, both ways: what its connections sent (publishes, requests,
 * acks, pulls) and what the server delivered to them. The connection name is `<service>:<instance>`.
 */
export function perLaunchMessages(
  before: ConnectionCounters[],
  after: ConnectionCounters[],
  runs: number,
): Record<string, { sent: number; received: number }> {
  const result: Record<string, { sent: number; received: number }> = {};
  for (const connection of after) {
    const [service, instance] = connection.name.split(':');
    if (!service || !instance) continue;
    const earlier = before.find((each) => each.name === connection.name);
    const row = result[service] ?? { sent: 0, received: 0 };
    result[service] = row;
    row.sent = rounded(row.sent + (connection.inMsgs - (earlier?.inMsgs ?? 0)) / runs);
    row.received = rounded(row.received + (connection.outMsgs - (earlier?.outMsgs ?? 0)) / runs);
  }
  return result;
}

/**
 * What the stack burns doing nothing, per second of an idle window: each service (replicas
 * summed), the benchmark's nats-server and the machine's PostgreSQL and Redis. The window is
 * measured in one-second slices and the busiest slice of each is left out: a one-off in it (the
 * memory-reducing collection each process runs once after 30 quiet seconds, docs/decisions/0040,
 * often falls in this window right after start-up) is not a rate, and taking it off every launch
 * would understate what the launches cost. Without a one-off this reads at most one slice's
 * /proc tick (10 ms over the slices) low.
 */
export async function idleCpuPerSecond(
  ms: number,
  servicePids: () => Record<string, number | undefined>,
  natsPid: number,
): Promise<Record<string, number>> {
  // The warm-up runs' last writes (traces, archives) settle first.
  await sleep(1000);
  const slices: Array<Record<string, number>> = [];
  for (let slice = 0; slice < Math.max(2, Math.round(ms / 1000)); slice++) {
    const services = cpuMeter(servicePids());
    const broker = cpuMeter({ 'nats-server': natsPid });
    const servers = { postgres: namedProcessesCpuMs('postgres'), redis: namedProcessesCpuMs('redis-server') };
    const started = performance.now();
    await sleep(1000);
    const seconds = (performance.now() - started) / 1000;
    const perSecond: Record<string, number> = {};
    for (const [instance, used] of Object.entries(services())) {
      const service = instance.replace(/-\d+$/, '');
      perSecond[service] = (perSecond[service] ?? 0) + used / seconds;
    }
    perSecond['nats-server'] = (broker()['nats-server'] ?? 0) / seconds;
    perSecond.postgres = (namedProcessesCpuMs('postgres') - servers.postgres) / seconds;
    perSecond.redis = (namedProcessesCpuMs('redis-server') - servers.redis) / seconds;
    slices.push(perSecond);
  }
  const names = Object.keys(slices[0]!);
  return Object.fromEntries(
    names.map((name) => {
      const kept = slices
        .map((slice) => slice[name] ?? 0)
        .sort((a, b) => a - b)
        .slice(0, -1);
      return [name, rounded(kept.reduce((sum, value) => sum + value, 0) / kept.length)];
    }),
  );
}

/**
 * A counter per service, its processes summed, from their `/metrics` (0 before its first count);
 * `only` scrapes one service and leaves the others be (a scrape costs a process CPU of its own).
 */
export async function countersByService(
  services: ReadonlyArray<{ name: string; opsUrl?: string | undefined }>,
  metric: string,
  only?: string,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const service of services) {
    if (!service.opsUrl || (only !== undefined && service.name !== only)) continue;
    counts[service.name] = (counts[service.name] ?? 0) + sumOf(await scrape(service.opsUrl), metric);
  }
  return counts;
}

/** Statements sent so far per service (`db.client.operation.duration` samples of its pg instrumentation). */
export function statementCounts(
  services: ReadonlyArray<{ name: string; opsUrl?: string | undefined }>,
): Promise<Record<string, number>> {
  return countersByService(services, 'db_client_operation_duration_count');
}
