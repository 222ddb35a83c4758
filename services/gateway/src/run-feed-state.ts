import { type Bus, decodeEnvelope, InvalidEnvelopeError, nextStored, type OrderedItem } from '@quill/bus';
import { EventEnvelope, encodeSseFrame, type SseFrame } from '@quill/contracts';

type EventItem = OrderedItem<EventEnvelope>;

/** A frame the caller stored itself (a launch's `run_started`), with the sequence its publish got. */
export interface OwnFrame {
  readonly seq: number;
  readonly frame: SseFrame;
}

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

/** One run's frames in this gateway, shared by all its streams here. */
export interface Feed {
  subscribe(afterSeq: number): FeedSubscription;
  /**
   * A frame as it was stored. `previousSeq` (the run's sequence before it, when the source knows
   * it) shows a frame the source missed: the feed then reads the gap by sequence first.
   */
  live(item: FeedItem, previousSeq?: number): void;
  /** The source may have missed frames (a reconnect): read what is stored after the last one. */
  catchUp(): void;
  fail(error: unknown): void;
}

// A frame is held only until every stream of the run has passed it. Kept longer (for a second tab
// or a resume to join from memory), every frame outlived the young generation's collections and
// was copied into the old one, at every run's frame rate (docs/decisions/0071). A joiner reads
// what the others have passed from the stream by sequence, as a resume after the feed closed does.
// A stream this far behind (a stuck client) no longer holds frames in memory: it reads the gap
// from the stream instead.
const MAX_RETAINED = 4096;

export function toFeedItem(subject: string, seq: number, data: Uint8Array, pending = 0): FeedItem {
  try {
    return heldItem(subject, seq, pending, decodeEnvelope(EventEnvelope, subject, data));
  } catch (error) {
    if (!(error instanceof InvalidEnvelopeError)) throw error;
    return { seq, item: { seq, subject, pending, envelope: undefined, invalid: error }, sse: undefined };
  }
}

function heldItem(subject: string, seq: number, pending: number, envelope: EventEnvelope): FeedItem {
  return { seq, item: { seq, subject, pending, envelope }, sse: encodeSseFrame(envelope.frame, seq) };
}

/** The first stored frame of the run after `afterSeq`, or undefined when there is none yet. */
async function storedAfter(bus: Bus, subject: string, afterSeq: number): Promise<FeedItem | undefined> {
  const stored = await nextStored(bus, { stream: bus.names.streams.events, subject, afterSeq });
  return stored ? toFeedItem(subject, stored.seq, stored.data) : undefined;
}

/**
 * One run's feed: what is stored after `startAfter` (by sequence, `next_by_subj` gets: no
 * consumer), then the source's live frames, each sequence once, in order. `attach` starts the
 * source (the tap, or the run's live subscription) and settles once nothing published from
 * then on can be missed; the stored frames are read after it, so nothing falls in between.
 * `first`, the run's first stored frame when the caller stored it itself (a launch), is held
 * from the start, so the read begins after it instead of reading it back
 * (docs/decisions/0064-a-launch-reads-back-nothing-it-knows.md). It goes through the envelope's
 * schema as its publish and any read of it do, so its SSE text is the one a resume shows.
 */
export function openFeed(
  bus: Bus,
  runId: string,
  startAfter: number,
  attach: (feed: Feed) => Promise<void>,
  onClosed: () => void,
  first?: OwnFrame,
): Feed {
  const subject = bus.names.events(runId);
  const history: FeedItem[] =
    first && first.seq > startAfter
      ? [heldItem(subject, first.seq, 0, EventEnvelope.parse({ v: 1, frame: first.frame }))]
      : [];
  /** Every stored frame after this sequence is in `history` or still to come. */
  let coveredFrom = startAfter;
  let started = false;
  /** Reading stored frames (at the start, or a gap); live frames wait in `early` meanwhile. */
  let filling = true;
  let fillAgain = false;
  const early: Array<{ item: FeedItem; previousSeq: number | undefined }> = [];
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
    dropPassed();
    notify();
  };
  /** Lets go of the frames every stream has passed (and of the oldest past MAX_RETAINED). */
  const dropPassed = () => {
    let slowest = Number.POSITIVE_INFINITY;
    for (const position of positions.values()) if (position < slowest) slowest = position;
    let passed = 0;
    while (
      passed < history.length &&
      (history[passed]!.seq <= slowest || history.length - passed > MAX_RETAINED)
    ) {
      passed++;
    }
    if (passed === 0) return;
    coveredFrom = history[passed - 1]!.seq;
    history.splice(0, passed);
  };
  const fail = (error: unknown) => {
    failure ??= error;
    notify();
  };

  /** Reads what is stored after the last held frame until none is left, then the queued live ones. */
  const fill = async (): Promise<void> => {
    filling = true;
    do {
      fillAgain = false;
      for (let stored = await storedAfter(bus, subject, lastSeq()); stored && !closed; ) {
        append(stored);
        stored = await storedAfter(bus, subject, stored.seq);
      }
    } while (fillAgain && !closed);
    filling = false;
    for (const queued of early.splice(0)) feed.live(queued.item, queued.previousSeq);
  };
  const refill = () => {
    if (filling) {
      fillAgain = true;
      return;
    }
    fill().catch(fail);
  };

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

  const feed: Feed = {
    live(item, previousSeq) {
      if (filling) {
        early.push({ item, previousSeq });
        return;
      }
      if (previousSeq !== undefined && previousSeq > lastSeq()) {
        // Something between the last held frame and this one never arrived: read it first.
        early.push({ item, previousSeq });
        refill();
        return;
      }
      append(item);
    },
    catchUp() {
      if (started) refill();
    },
    fail,
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
  // Attached first, then what was stored before: nothing can fall in between.
  const ready = (async () => {
    await attach(feed);
    await fill();
    started = true;
    notify();
  })();
  ready.catch(fail);
  return feed;
}
