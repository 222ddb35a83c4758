import type { Bus } from './connection.ts';

export interface ConsumerLag {
  stream: string;
  consumer: string;
  /** Messages not yet delivered to anyone (what KEDA's nats-jetstream scaler scales on). */
  pending: number;
  /** Delivered, not acknowledged yet: work in progress. */
  ackPending: number;
  /** Messages delivered more than once (a replica died or nak'd). */
  redelivered: number;
}

/**
 * Remembers a durable consumer this connection pulls, so its metrics report the lag of exactly
 * the consumers it serves (a writer its roles, the router RUNS, billing the usage ledger).
 */
export function trackConsumer(bus: Bus, stream: string, consumer: string): void {
  bus.state.pulledConsumers.set(`${stream}/${consumer}`, { stream, consumer });
}

/** One JetStream consumer info call per pulled consumer; one that fails is left out. */
export async function consumerLag(bus: Bus): Promise<ConsumerLag[]> {
  const consumers = [...bus.state.pulledConsumers.values()];
  const infos = await Promise.allSettled(
    consumers.map(async ({ stream, consumer }) => {
      const info = await bus.jsm.consumers.info(stream, consumer);
      return {
        stream,
        consumer,
        pending: info.num_pending,
        ackPending: info.num_ack_pending,
        redelivered: info.num_redelivered,
      };
    }),
  );
  return infos.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
}
