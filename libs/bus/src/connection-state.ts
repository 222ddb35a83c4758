import type { PubAck } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import { type AckedPublisher, createAckedPublisher } from './acked-publisher.ts';

/** A quiet publish waiting for its batch, and who is told its ack. */
export interface QueuedPublish {
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs;
  resolve(ack: PubAck): void;
  reject(error: unknown): void;
}

/** Quiet publishes waiting for the next batch of one connection (publish.ts `inNextBatch`). */
export interface PublishBatches {
  queue: QueuedPublish[];
  /** Batches sent whose acks have not all come back. */
  inFlight: number;
  scheduled: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * What the bus modules keep per connection. It is made by `connectBus` and carried on the `Bus`,
 * so a service builds it in its `main.ts` (through `startService`) and hands it down with the
 * bus; nothing is created at import time, and two connections in one process (tests) never
 * share any of it.
 */
export interface ConnectionState {
  /** The ack-inbox publisher of quiet publishes, made on the first one (it subscribes an inbox). */
  ackedPublisher(): AckedPublisher;
  readonly batches: PublishBatches;
  /** Called after every reconnect (resubscribe.ts); one status watcher serves them all. */
  readonly reconnectListeners: Set<() => void>;
  /** Whether that status watcher runs yet. */
  watchingStatus: boolean;
  /** The durable consumers this connection pulls, whose lag its metrics report (consumer-lag.ts). */
  readonly pulledConsumers: Map<string, { stream: string; consumer: string }>;
}

export function createConnectionState(connection: NatsConnection, ackTimeoutMs: number): ConnectionState {
  let publisher: AckedPublisher | undefined;
  return {
    ackedPublisher() {
      publisher ??= createAckedPublisher(connection, { timeoutMs: ackTimeoutMs });
      return publisher;
    },
    batches: { queue: [], inFlight: 0, scheduled: false, timer: undefined },
    reconnectListeners: new Set(),
    watchingStatus: false,
    pulledConsumers: new Map(),
  };
}
