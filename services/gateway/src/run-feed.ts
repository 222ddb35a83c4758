import {
  type Bus,
  decodeEnvelope,
  InvalidEnvelopeError,
  lastSequence,
  nextStored,
  type OrderedItem,
  type RawStoredMessage,
  readOrderedRaw,
} from '@quill/bus';
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
  /** Settles once the stream can start (rejects when the gateway cannot read the run's events). */
  readonly ready: Promise<void>;
  close(): void;
}

export interface RunFeeds {
  /** The run's frames after `afterSeq`, in order, live until `close()`. */
  subscribe(runId: string, afterSeq: number): FeedSubscription;
}

// Frames kept for joiners once every stream has passed them: a resume or a second tab right
// after the first gets them from memory.
const RETAINED = 64;
// A stream this far behind (a stuck client) no longer holds frames in memory: it reads the gap
// from the stream instead.
const MAX_RETAINED = 4096;

/**
 * The gateway's view of `run.<id>.events`: ONE ordered consumer per gateway on `run.*.events`
 * (the tap), fanned out in memory to the runs this gateway streams, instead of an ordered
 * consumer per SSE connection. JetStream then delivers each frame once per gateway in batches,
 * rather than once per connection to a consumer of its own, which costs the server several times
 * more per frame (`test/load/jetstream-publish.ts` measures both), and an open stream costs a
 * socket and a few timers, not a server consumer with heartbeats. Frames of runs nobody streams here are dropped unparsed.
 *
 * Resume by sequence stays exact: a stream that starts after `afterSeq` first reads what is
 * already stored after it (by sequence, `next_by_subj` gets: no consumer), then the tap's frames,
 * each sequence once, in order. A stream behind what the feed holds reads its gap the same way.
 * A gateway makes one in its main.ts and every SSE response of that process reads from it.
 */
export function createRunFeeds(bus: Bus): RunFeeds {
  const feeds = new Map<string, Feed>();
  let tap: Promise<void> | undefined;
  const ensureTap = (): Promise<void> => {
    tap ??= startTap(bus, feeds).catch((error: unknown) => {
      tap = undefined;
      throw error;
    });
    return tap;
  };
  const tapFailed = (error: unknown) => {
    tap = undefined;
    for (const feed of feeds.values()) feed.fail(error);
  };
  const startTap = async (tapBus: Bus, runFeeds: Map<string, Feed>): Promise<void> => {
    const stream = tapBus.names.streams.events;
    // Everything after the current last sequence comes through the tap; a feed reads what is
    // stored before it by sequence.
    const messages = await readOrderedRaw(tapBus, {
      stream,
      subject: tapBus.names.events('*'),
      startSeq: (await lastSequence(tapBus, stream)) + 1,
    });
    // `<namespace.>run.<runId>.events`
    const head = tapBus.names.events('').length - '.events'.length;
    const runIdOf = (subject: string) => subject.slice(head, -'.events'.length);
    void (async () => {
      for await (const message of messages) runFeeds.get(runIdOf(message.subject))?.live(message);
      tapFailed(new Error('the run event tap stopped'));
    })().catch(tapFailed);
  };

  return {
    subscribe(runId, afterSeq) {
      let feed = feeds.get(runId);
      if (!feed) {
        const created = openFeed(bus, runId, afterSeq, ensureTap, () => {
          if (feeds.get(runId) === created) feeds.delete(runId);
        });
        feeds.set(runId, created);
        feed = created;
      }
      return feed.subscribe(afterSeq);
    },
  };
}

interface Feed {
  subscribe(afterSeq: number): FeedSubscription;
  /** A frame from the tap. */
  live(message: RawStoredMessage): void;
  fail(error: unknown): void;
}

function toFeedItem(subject: string, seq: number, data: Uint8Array, pending = 0): FeedItem {
  try {
    const envelope = decodeEnvelope(EventEnvelope, subject, data);
    return { seq, item: { seq, subject, pending, envelope }, sse: encodeSseFrame(envelope.frame, seq) };
  } catch (error) {
    if (!(error instanceof InvalidEnvelopeError)) throw error;
    return { seq, item: { seq, subject, pending, envelope: undefined, invalid: error }, sse: undefined };
  }
}

/** The first stored frame of the run after `afterSeq`, or undefined when there is none yet. */
async function storedAfter(bus: Bus, subject: string, afterSeq: number): Promise<FeedItem | undefined> {
  const stored = await nextStored(bus, { stream: bus.names.streams.events, subject, afterSeq });
  return stored ? toFeedItem(subject, stored.seq, stored.data) : undefined;
}

function openFeed(
  bus: Bus,
  runId: string,
  startAfter: number,
  ensureTap: () => Promise<void>,
  onClosed: () => void,
): Feed {
  const subject = bus.names.events(runId);
  const history: FeedItem[] = [];
  /** Every stored frame after this sequence is in `history` or still to come from the tap. */
  let coveredFrom = startAfter;
  let started = false;
  /** Tap frames that arrived while the stored ones were being read. */
  const early: FeedItem[] = [];
  let failure: unknown;
  let ended = false;
  let closed = false;
  const waiting = new Set<() => void>();
  const positions = new Map<symbol, number>();

  const notify = () => {
    for (const resolve of waiting) resolve();
    waiting.clear();
  };
  const lastSeq = () => history.at(-1)?.seq ?? coveredFrom;
  const append = (item: FeedItem) => {
    if (item.seq <= lastSeq()) return;
    history.push(item);
    if (item.item.envelope?.frame.type === 'done') ended = true;
    if (history.length > RETAINED) {
      const slowest = Math.min(...positions.values());
      while (history.length > RETAINED && (history[0]!.seq <= slowest || history.length > MAX_RETAINED)) {
        coveredFrom = history.shift()!.seq;
      }
    }
    notify();
  };

  // Subscribed to the tap first, then what was stored before: nothing can fall in between.
  const ready = (async () => {
    await ensureTap();
    for (let stored = await storedAfter(bus, subject, startAfter); stored && !closed; ) {
      append(stored);
      stored = await storedAfter(bus, subject, stored.seq);
    }
    started = true;
    for (const item of early.splice(0)) append(item);
  })();
  ready.catch((error: unknown) => {
    failure = error;
    notify();
  });

  /** The first held frame after `position`. */
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
    live(message) {
      const item = toFeedItem(subject, message.seq, message.data, message.pending);
      if (started) append(item);
      else early.push(item);
    },
    fail(error) {
      failure ??= error;
      notify();
    },
    subscribe(afterSeq) {
      const key = Symbol(runId);
      let position = afterSeq;
      let unsubscribed = false;
      let resume: (() => void) | undefined;
      positions.set(key, position);

      const next = async (): Promise<IteratorResult<FeedItem>> => {
        for (;;) {
          if (unsubscribed) return { done: true, value: undefined };
          if (failure) throw failure;
          if (started && position < coveredFrom) {
            // Behind what the feed holds: read the gap from the stream.
            const stored = await storedAfter(bus, subject, position);
            if (unsubscribed) return { done: true, value: undefined };
            if (stored && stored.seq <= coveredFrom) {
              position = stored.seq;
              positions.set(key, position);
              return { done: false, value: stored };
            }
            // Nothing stored between here and what the feed holds.
            position = coveredFrom;
            positions.set(key, position);
          }
          const held = started ? after(position) : undefined;
          if (held) {
            position = held.seq;
            positions.set(key, position);
            return { done: false, value: held };
          }
          if (ended && started) return { done: true, value: undefined };
          await new Promise<void>((resolve) => {
            resume = resolve;
            waiting.add(resolve);
          });
        }
      };
      const unsubscribe = () => {
        if (unsubscribed) return;
        unsubscribed = true;
        positions.delete(key);
        if (resume) {
          waiting.delete(resume);
          resume();
        }
        if (positions.size === 0) {
          closed = true;
          onClosed();
        }
      };
      const iterator: AsyncIterator<FeedItem> = {
        next,
        async return() {
          unsubscribe();
          return { done: true, value: undefined };
        },
      };
      return { ready, close: unsubscribe, [Symbol.asyncIterator]: () => iterator };
    },
  };
}
