import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { busNames } from '@quill/contracts';
import type { ConnectionCounters } from './private-nats.ts';
import { rounded } from './stats.ts';

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
