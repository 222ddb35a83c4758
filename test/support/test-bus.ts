import { type Bus, connectBus, ensureStreams, type StreamSettings } from '@quill/bus';
import { testUrls, uniqueName } from './urls.ts';

export const TEST_STREAM_SETTINGS: StreamSettings = {
  eventsMaxAgeHours: 1,
  runAckWaitSeconds: 30,
  runMaxDeliver: 5,
  taskAckWaitSeconds: 30,
};

/** A bus on a namespace of its own with Quill's streams made: one test file's isolation. */
export async function openTestBus(
  prefix: string,
  name: string,
  settings: Partial<StreamSettings> = {},
): Promise<Bus> {
  const bus = await connectBus({ url: testUrls.nats, namespace: uniqueName(prefix), name });
  await ensureStreams(bus, { ...TEST_STREAM_SETTINGS, ...settings });
  return bus;
}

/** Deletes the namespace's streams (left behind they slow the shared nats-server), then closes. */
export async function closeTestBus(bus: Bus | undefined): Promise<void> {
  if (!bus) return;
  const { runs, tasks, events } = bus.names.streams;
  await Promise.allSettled([runs, tasks, events].map((stream) => bus.jsm.streams.delete(stream)));
  await bus.close();
}

/**
 * Counts the stored-message gets (`next_by_subj`, `last_by_subj`) a test's code makes on `bus`,
 * on the real connection: each is one request to the server. `restore` puts the method back.
 */
export function countStoredGets(bus: Bus): { count: number; restore(): void } {
  return countStoredReads(bus, { consumers: false });
}

/**
 * Counts the reads of stored messages a test's code makes on `bus`: direct gets and, unless
 * `consumers: false`, the consumers it makes to read a subject (`readStored`'s longer reads).
 */
export function countStoredReads(
  bus: Bus,
  options: { consumers?: boolean } = {},
): { count: number; restore(): void } {
  const { streams, consumers } = bus.jsm;
  const getMessage = streams.getMessage.bind(streams);
  const add = consumers.add.bind(consumers);
  const counter = {
    count: 0,
    restore: () => {
      streams.getMessage = getMessage;
      consumers.add = add;
    },
  };
  streams.getMessage = (...args) => {
    counter.count++;
    return getMessage(...args);
  };
  if (options.consumers !== false) {
    consumers.add = (...args) => {
      counter.count++;
      return add(...args);
    };
  }
  return counter;
}

/** A direct get's query (`seq`, `next_by_subj`, `last_by_subj`) as the code under test sent it. */
export type StoredGet = { seq?: number; next_by_subj?: string; last_by_subj?: string };
/** A consumer's configuration as the code under test made it. */
export type MadeConsumer = { filter_subject?: string; deliver_policy?: string; opt_start_seq?: number };

/**
 * Records where the reads of stored messages a test's code makes on `bus` start: every direct
 * get's query and every consumer's configuration, in order, on the real connection. `restore`
 * puts the methods back.
 */
export function recordStoredReads(bus: Bus): {
  gets: StoredGet[];
  consumers: MadeConsumer[];
  restore(): void;
} {
  const { streams, consumers } = bus.jsm;
  const getMessage = streams.getMessage.bind(streams);
  const add = consumers.add.bind(consumers);
  const reads = {
    gets: [] as StoredGet[],
    consumers: [] as MadeConsumer[],
    restore: () => {
      streams.getMessage = getMessage;
      consumers.add = add;
    },
  };
  streams.getMessage = (stream, query) => {
    reads.gets.push({ ...(query as StoredGet) });
    return getMessage(stream, query);
  };
  consumers.add = (stream, config) => {
    reads.consumers.push({ ...config });
    return add(stream, config);
  };
  return reads;
}
