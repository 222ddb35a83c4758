import { type Bus, lastSequence, readOrderedRaw, republishesTo, subscribeRepublished } from '@quill/bus';
import { type Feed, type FeedSubscription, type OwnFrame, openFeed, toFeedItem } from './run-feed-state.ts';

export type { FeedItem, FeedSubscription, OwnFrame } from './run-feed-state.ts';

export interface RunFeeds {
  /**
   * The run's frames after `afterSeq`, in order, live until `close()`. `first`: the run's first
   * frame, stored by the caller itself (a launch streaming its own run), so it is not read back.
   */
  subscribe(runId: string, afterSeq: number, first?: OwnFrame): FeedSubscription;
}

/**
 * Starts a run's live frames into its feed; settles once none published from then on can be
 * missed, with the function that stops them.
 */
type Attach = (runId: string, feed: Feed) => Promise<() => void>;

/**
 * The gateway's view of `run.<id>.events`, one feed per run that has a stream here, fanned out
 * in memory to that run's streams: each frame is read and SSE-encoded once per gateway however
 * many streams show it, and an open stream costs a socket and a few timers.
 *
 * Live frames come from a core subscription per run on `run.<id>.live`, where EVENTS republishes
 * every stored frame with its sequence (docs/decisions/0027-per-run-live-subscriptions.md): the
 * server sends a gateway only the frames of the runs it streams, so gateways scale out. Core
 * delivery is at most once; each republished frame names the run's previous sequence, so a
 * missed frame is read by sequence before the next one is shown, and after a reconnect every
 * feed reads what was stored meanwhile. An EVENTS stream created before the republish (2.9 can
 * not add it later) is read through one ordered consumer per gateway on `run.*.events` instead
 * (the tap, docs/decisions/0002-gateway-event-tap.md), which delivers every run to every gateway.
 *
 * Resume by sequence is exact either way: a feed first reads what is stored after `afterSeq`
 * (`next_by_subj` gets: no consumer), then the live frames, each sequence once, in order; a
 * stream behind what the feed holds reads its gap the same way. A gateway makes one in its
 * main.ts and every SSE response of that process reads from it.
 */
export function createRunFeeds(bus: Bus): RunFeeds {
  const feeds = new Map<string, Feed>();
  let attach: Promise<Attach> | undefined;
  const chooseSource = (): Promise<Attach> => {
    attach ??= republishesTo(bus, bus.names.streams.events, bus.names.liveMapping)
      .then((republished) => (republished ? liveSource(bus) : tapSource(bus, feeds)))
      .catch((error: unknown) => {
        attach = undefined;
        throw error;
      });
    return attach;
  };

  return {
    subscribe(runId, afterSeq, first) {
      let feed = feeds.get(runId);
      if (!feed) {
        let detach: (() => void) | undefined;
        let closed = false;
        const created = openFeed(
          bus,
          runId,
          afterSeq,
          async (self) => {
            const source = await chooseSource();
            const sourceDetach = await source(runId, self);
            if (closed) sourceDetach();
            else detach = sourceDetach;
          },
          () => {
            closed = true;
            detach?.();
            if (feeds.get(runId) === created) feeds.delete(runId);
          },
          first,
        );
        feeds.set(runId, created);
        feed = created;
      }
      return feed.subscribe(afterSeq);
    },
  };
}

/** Each feed subscribes to its own run's republished frames. */
function liveSource(bus: Bus): Attach {
  return async (runId, feed) => {
    const subject = bus.names.events(runId);
    const subscription = subscribeRepublished(bus, bus.names.live(runId), {
      message: (message) => feed.live(toFeedItem(subject, message.seq, message.data), message.previousSeq),
      reconnected: () => feed.catchUp(),
    });
    try {
      await subscription.ready;
    } catch (error) {
      subscription.close();
      throw error;
    }
    return () => subscription.close();
  };
}

/** One ordered consumer on `run.*.events` for every feed of the gateway (the tap). */
function tapSource(bus: Bus, feeds: ReadonlyMap<string, Feed>): Attach {
  let tap: Promise<void> | undefined;
  const tapFailed = (error: unknown) => {
    tap = undefined;
    for (const feed of feeds.values()) feed.fail(error);
  };
  const startTap = async (): Promise<void> => {
    const stream = bus.names.streams.events;
    // Everything after the current last sequence comes through the tap; a feed reads what is
    // stored before it by sequence.
    const messages = await readOrderedRaw(bus, {
      stream,
      subject: bus.names.events('*'),
      startSeq: (await lastSequence(bus, stream)) + 1,
    });
    // `<namespace.>run.<runId>.events`
    const head = bus.names.events('').length - '.events'.length;
    const runIdOf = (subject: string) => subject.slice(head, -'.events'.length);
    void (async () => {
      for await (const message of messages) {
        // Frames of runs nobody streams here are dropped unparsed.
        feeds
          .get(runIdOf(message.subject))
          ?.live(toFeedItem(message.subject, message.seq, message.data, message.pending));
      }
      tapFailed(new Error('the run event tap stopped'));
    })().catch(tapFailed);
  };
  return async () => {
    tap ??= startTap().catch((error: unknown) => {
      tap = undefined;
      throw error;
    });
    await tap;
    return () => undefined;
  };
}
