import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type BusNames, busNames } from '@quill/contracts';

export interface Bus {
  readonly connection: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: BusNames;
  /** Drains subscriptions and pending publishes, then closes. */
  close(): Promise<void>;
}

export interface BusOptions {
  url: string;
  namespace: string;
  /** Connection name shown by the server (`nats server report connections`). */
  name: string;
}

export async function connectBus(options: BusOptions): Promise<Bus> {
  const connection = await connect({
    servers: options.url.split(','),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // Otherwise every request (each JetStream publish) builds two Error objects with stack traces
    // up front, just in case it fails: a tenth of a writer's CPU per frame.
    noAsyncTraces: true,
  });
  const js = jetstream(connection);
  // Admin calls (stream and consumer upserts at start-up) can be slow on a busy server; a replica
  // that gives up after the default 5 s would crash-loop exactly when the fleet scales out.
  const jsm = await jetstreamManager(connection, { timeout: 20_000 });
  return {
    connection,
    js,
    jsm,
    names: busNames(options.namespace),
    async close() {
      if (connection.isClosed()) return;
      await connection.drain().catch(() => connection.close());
    },
  };
}
