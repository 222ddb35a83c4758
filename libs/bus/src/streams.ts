import { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { isTransientNatsError, retryWithBackoff } from './backoff.ts';
import type { Bus } from './connection.ts';

const NANOS_PER_SECOND = 1_000_000_000;
const seconds = (value: number) => value * NANOS_PER_SECOND;

export interface StreamSettings {
  eventsMaxAgeHours: number;
  runAckWaitSeconds: number;
  runMaxDeliver: number;
  taskAckWaitSeconds: number;
}

/**
 * Creates (or updates) RUNS, TASKS and EVENTS and the router's durable consumer. Safe to call
 * from every replica at start-up: add is retried as update when the stream already exists.
 */
export async function ensureStreams(bus: Bus, settings: StreamSettings): Promise<void> {
  const { names } = bus;
  await upsertStream(bus, {
    name: names.streams.runs,
    subjects: [names.runStartAll],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: seconds(20 * 60),
  });
  await upsertStream(bus, {
    name: names.streams.tasks,
    subjects: [names.taskEverything],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: seconds(20 * 60),
  });
  await upsertStream(bus, {
    name: names.streams.events,
    subjects: [...names.eventSubjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: Math.round(seconds(settings.eventsMaxAgeHours * 3600)),
    // Longer than the run wall clock, so a terminal frame published by two parties (a takeover
    // router and a gateway fallback) is stored once; JetStream refuses one longer than max_age.
    duplicate_window: Math.round(seconds(Math.min(20 * 60, settings.eventsMaxAgeHours * 3600))),
    // Each stored frame again on `run.<id>.live`, with its sequence and the run's previous one
    // (headers Nats-Sequence, Nats-Last-Sequence): gateways subscribe per run they stream
    // (docs/decisions/0027-per-run-live-subscriptions.md). nats-server 2.9 sets this only when
    // the stream is created; an older stream keeps working without it (the gateway's tap).
    republish: { src: names.events('*'), dest: names.liveMapping },
  });
  await upsertConsumer(bus, names.streams.runs, {
    durable_name: names.consumers.router,
    ack_policy: AckPolicy.Explicit,
    ack_wait: seconds(settings.runAckWaitSeconds),
    max_deliver: settings.runMaxDeliver,
    // Replicas bound their own concurrency; this only caps the whole fleet.
    max_ack_pending: 20_000,
    deliver_policy: DeliverPolicy.All,
    filter_subject: names.runStartAll,
  });
}

/**
 * Deliveries of a role task before JetStream drops it. The worker reads the same number to know a
 * delivery is the last one and report the step failed rather than let it vanish (README "Fault
 * tolerance").
 */
export const TASK_MAX_DELIVER = 3;

/** One durable per role on TASKS, filtered to `task.<role>.>` (nats-server 2.9: one filter). */
export async function ensureRoleConsumer(
  bus: Bus,
  role: string,
  settings: { ackWaitSeconds: number; maxDeliver?: number },
): Promise<string> {
  const name = bus.names.consumers.role(role);
  await upsertConsumer(bus, bus.names.streams.tasks, {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    ack_wait: seconds(settings.ackWaitSeconds),
    max_deliver: settings.maxDeliver ?? TASK_MAX_DELIVER,
    max_ack_pending: 20_000,
    deliver_policy: DeliverPolicy.All,
    filter_subject: bus.names.taskAll(role),
  });
  return name;
}

/** Durable consumer for billing's usage ledger. */
export async function ensureUsageConsumer(bus: Bus, settings: { ackWaitSeconds: number }): Promise<string> {
  const name = bus.names.consumers.billingUsage;
  await upsertConsumer(bus, bus.names.streams.events, {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    ack_wait: seconds(settings.ackWaitSeconds),
    max_deliver: 10,
    max_ack_pending: 10_000,
    deliver_policy: DeliverPolicy.All,
    filter_subject: bus.names.usageAll,
  });
  return name;
}

type StreamConfigInput = Parameters<Bus['jsm']['streams']['add']>[0];
type ConsumerConfigInput = Parameters<Bus['jsm']['consumers']['add']>[1];

/**
 * A replica starting while the server is busy or recovering waits for it (logged with what it
 * waits for) instead of exiting: the upsert is idempotent, so another attempt is always safe.
 */
function whenAnswered(bus: Bus, what: string, upsert: () => Promise<void>): Promise<void> {
  return retryWithBackoff(upsert, { what, logger: bus.logger, retryable: isTransientNatsError });
}

function upsertStream(bus: Bus, config: StreamConfigInput & { name: string }): Promise<void> {
  return whenAnswered(bus, `JetStream stream ${config.name}`, () => upsertStreamOnce(bus, config));
}

function upsertConsumer(bus: Bus, stream: string, config: ConsumerConfigInput): Promise<void> {
  return whenAnswered(bus, `JetStream consumer ${stream}/${config.durable_name}`, () =>
    upsertConsumerOnce(bus, stream, config),
  );
}

async function upsertStreamOnce(bus: Bus, config: StreamConfigInput & { name: string }): Promise<void> {
  try {
    const existing = await bus.jsm.streams.info(config.name);
    const { retention: _retention, storage: _storage, republish, ...updatable } = config;
    // nats-server 2.9 refuses any change of RePublish on update: the stream keeps what it has.
    const kept = existing.config.republish;
    if (republish && kept?.dest !== republish.dest) {
      bus.logger?.warn(
        { stream: config.name },
        'stream has no republish (created before it): gateways read it through one tap each until it is recreated',
      );
    }
    await bus.jsm.streams.update(config.name, { ...updatable, ...(kept ? { republish: kept } : {}) });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    try {
      await bus.jsm.streams.add(config);
    } catch (addError) {
      // Another replica created it between our info and add.
      if (!isAlreadyInUse(addError)) throw addError;
    }
  }
}

async function upsertConsumerOnce(bus: Bus, stream: string, config: ConsumerConfigInput): Promise<void> {
  try {
    await bus.jsm.consumers.add(stream, config);
  } catch (error) {
    // An existing durable with different settings: update what may be updated.
    if (!isAlreadyInUse(error) || !config.durable_name) throw error;
    const { deliver_policy: _deliver, filter_subject: _filter, ...updatable } = config;
    await bus.jsm.consumers.update(stream, config.durable_name, updatable);
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && /not found/i.test(error.message);
}

function isAlreadyInUse(error: unknown): boolean {
  return error instanceof Error && /already in use|already exists|consumer name already/i.test(error.message);
}
