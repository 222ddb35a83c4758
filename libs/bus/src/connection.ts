import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type BusNames, busNames } from '@quill/contracts';
import { type RetryLogger, retryWithBackoff } from './backoff.ts';
import { type ConnectionState, createConnectionState } from './connection-state.ts';
import { installRequestSettleFix } from './request-settle-fix.ts';

export interface Bus {
  readonly connection: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: BusNames;
  /** Where set-up (streams, consumers) logs what it waits for. */
  readonly logger: RetryLogger | undefined;
  /** How a JetStream publish whose ack was lost is retried (README "Fault tolerance"). */
  readonly publishRetry: PublishRetry;
  /** This connection's own bookkeeping (quiet-publish batches, reconnect listeners, pulled consumers). */
  readonly state: ConnectionState;
  /** Drains subscriptions and pending publishes, then closes. */
  close(): Promise<void>;
}

export interface BusOptions {
  url: string;
  namespace: string;
  /** Connection name shown by the server (`nats server report connections`). */
  name: string;
  logger?: RetryLogger;
  /** Aborts the wait for a server that does not answer (default: wait as long as it takes). */
  signal?: AbortSignal;
  publishRetry?: Partial<PublishRetry>;
}

export interface PublishRetry {
  /** How long one attempt waits for its ack (`NATS_PUBLISH_ACK_TIMEOUT_MS`). */
  ackTimeoutMs: number;
  /** All attempts of one publish together (`NATS_PUBLISH_RETRY_MS`); then the publish fails. */
  deadlineMs: number;
}

// JetStream API calls (stream and consumer look-ups and upserts) can take seconds on a busy server
// or a CPU-starved replica; the client's 5 s default made starting replicas exit (README "Fault
// tolerance"). They are retried besides.
const JETSTREAM_API_TIMEOUT_MS = 20_000;

/**
 * Connects to NATS, waiting (with backoff, logging each attempt) for a server that is not up
 * yet, so a replica started before its broker, or while the broker restarts, does not exit.
 */
export async function connectBus(options: BusOptions): Promise<Bus> {
  if (!installRequestSettleFix())
    options.logger?.warn({}, 'nats.js request methods changed: the request settle fix is not applied');
  const servers = options.url.split(',');
  const connection = await retryWithBackoff(
    () =>
      connect({
        servers,
        name: options.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        timeout: JETSTREAM_API_TIMEOUT_MS,
        // Otherwise every request (each JetStream publish) builds two Error objects with stack
        // traces up front, just in case it fails: a tenth of a writer's CPU per frame.
        noAsyncTraces: true,
      }),
    { what: `NATS at ${options.url}`, logger: options.logger, signal: options.signal },
  );
  try {
    const js = jetstream(connection, { timeout: JETSTREAM_API_TIMEOUT_MS });
    const jsm = await retryWithBackoff(
      () => jetstreamManager(connection, { timeout: JETSTREAM_API_TIMEOUT_MS }),
      { what: `JetStream at ${options.url}`, logger: options.logger, signal: options.signal },
    );
    const publishRetry = { ackTimeoutMs: 3000, deadlineMs: 15_000, ...options.publishRetry };
    return {
      connection,
      js,
      jsm,
      names: busNames(options.namespace),
      logger: options.logger,
      publishRetry,
      state: createConnectionState(connection, publishRetry.ackTimeoutMs),
      async close() {
        if (connection.isClosed()) return;
        await connection.drain().catch(() => connection.close());
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
