import { type Bus, type OrderedItem, type OrderedReader, readOrdered } from '@quill/bus';
import { EventEnvelope, encodeSseFrame } from '@quill/contracts';

type EventItem = OrderedItem<EventEnvelope>;

/** A stored frame as the relay writes it, encoded once however many streams show it. */
export interface FeedItem {
  readonly seq: number;
  readonly item: EventItem;
  /** The SSE text (`id:` + `data:`), or undefined when the stored envelope is invalid. */
  readonly sse: string | undefined;
}

export interface FeedSubscription extends AsyncIterable<FeedItem> {
  /** Settles once the run's consumer exists (rejects when it could not be created). */
  readonly ready: Promise<void>;
  close(): void;
}

export interface RunFeeds {
  /** The run's frames after `afterSeq`, in order, live until `close()`. */
  subscribe(runId: string, afterSeq: number): FeedSubscription;
}

// Frames kept for joiners once every stream has passed them: a resume or a second tab right
// after the first gets them without a consumer of its own.
const RETAINED = 64;
// A stream this far behind (a stuck client) no longer holds frames in memory: it reads its own.
const MAX_RETAINED = 4096;

/**
 * One ordered consumer per run on this gateway, shared by every SSE stream of that run here,
 * instead of one per stream: an open stream then costs a socket and a few timers, not a server
 * consumer with its own heartbeats, and each frame is decoded and encoded once. A stream that
 * resumes from before what the feed holds reads the gap with its own short-lived ordered
 * consumer and then joins; either way it sees every sequence after its Last-Event-ID once, in
 * order, so resume from any replica works as before.
 */
export function createRunFeeds(bus: Bus): RunFeeds {
  const feeds = new Map<string, Feed>();
  return {
    subscribe(runId, afterSeq) {
      let feed = feeds.get(runId);
      if (!feed) {
        feed = openFeed(bus, runId, afterSeq + 1, () => feeds.delete(runId));
        feeds.set(runId, feed);
      }
      return feed.subscribe(afterSeq);
    },
  };
}

const feedsByBus = new WeakMap<Bus, RunFeeds>();

/** The feeds of one bus connection (one per gateway process). */
export function runFeedsFor(bus: Bus): RunFeeds {
  let feeds = feedsByBus.get(bus);
  if (!feeds) {
    feeds = createRunFeeds(bus);
    feedsByBus.set(bus, feeds);
  }
  return feeds;
}

interface Feed {
  subscribe(afterSeq: number): FeedSubscription;
}

function openFeed(bus: Bus, runId: string, startSeq: number, onClosed: () => void): Feed {
  const subject = bus.names.events(runId);
  const history: FeedItem[] = [];
  /** Every stored frame after this sequence up to the newest read is in `history`. */
  let coveredFrom = startSeq - 1;
  let failure: unknown;
  let ended = false;
  let wake: { promise: Promise<void>; resolve: () => void } = Promise.withResolvers<void>();
  const positions = new Map<symbol, number>();
  const reader = readOrdered(bus, {
    stream: bus.names.streams.events,
    subject,
    schema: EventEnvelope,
    startSeq,
  });

  const notify = () => {
    const current = wake;
    wake = Promise.withResolvers<void>();
    current.resolve();
  };
  const trim = () => {
    if (history.length <= RETAINED) return;
    const slowest = Math.min(...positions.values());
    while (history.length > RETAINED && (history[0]!.seq <= slowest || history.length > MAX_RETAINED)) {
      coveredFrom = history.shift()!.seq;
    }
  };
  const pump = async () => {
    const ordered = await reader;
    for await (const item of ordered) {
      const sse = item.envelope ? encodeSseFrame(item.envelope.frame, item.seq) : undefined;
      history.push({ seq: item.seq, item, sse });
      trim();
      notify();
      if (item.envelope?.frame.type === 'done') break;
    }
  };
  const pumping = pump()
    .catch((error: unknown) => {
      failure = error;
    })
    .finally(() => {
      ended = true;
      notify();
    });
  const close = () => {
    onClosed();
    void reader.then((ordered) => ordered.close()).catch(() => undefined);
    void pumping;
  };

  /** The first held frame after `position`, if the history reaches it. */
  const after = (position: number): FeedItem | undefined => {
    let low = 0;
    let high = history.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (history[middle]!.seq <= position) low = middle + 1;
      else high = middle;
    }
    return history[low];
  };

  return {
    subscribe(afterSeq) {
      const key = Symbol(runId);
      let position = afterSeq;
      let closed = false;
      let catchUp: OrderedReader<EventEnvelope> | undefined;
      positions.set(key, position);

      const next = async (): Promise<IteratorResult<FeedItem>> => {
        for (;;) {
          if (closed) return { done: true, value: undefined };
          if (position < coveredFrom) {
            // Older than what the feed holds: read the gap, then join the feed.
            catchUp ??= await readOrdered(bus, {
              stream: bus.names.streams.events,
              subject,
              schema: EventEnvelope,
              startSeq: position + 1,
            });
            const result = await catchUp[Symbol.asyncIterator]().next();
            if (result.done || closed) return { done: true, value: undefined };
            const item = result.value;
            position = item.seq;
            if (position >= coveredFrom) {
              const reader = catchUp;
              catchUp = undefined;
              void reader.close();
            }
            positions.set(key, position);
            return {
              done: false,
              value: {
                seq: item.seq,
                item,
                sse: item.envelope ? encodeSseFrame(item.envelope.frame, item.seq) : undefined,
              },
            };
          }
          const held = after(position);
          if (held) {
            position = held.seq;
            positions.set(key, position);
            return { done: false, value: held };
          }
          if (failure) throw failure;
          if (ended) return { done: true, value: undefined };
          await wake.promise;
        }
      };
      const unsubscribe = () => {
        if (closed) return;
        closed = true;
        positions.delete(key);
        void catchUp?.close();
        notify();
        if (positions.size === 0) close();
        else trim();
      };
      const iterator: AsyncIterator<FeedItem> = {
        next,
        async return() {
          unsubscribe();
          return { done: true, value: undefined };
        },
      };
      return {
        ready: reader.then(() => undefined),
        close: unsubscribe,
        [Symbol.asyncIterator]: () => iterator,
      };
    },
  };
}
