import { type Bus, decodeEnvelope, InvalidEnvelopeError, readStored, subscribePublished } from '@quill/bus';
import { RUN_RECORDS_READ_ONE_BY_ONE, StepRecordEnvelope } from '@quill/contracts';
import { quillMetrics } from '@quill/telemetry';
import type { Logger } from 'pino';
import { type CatchUpPace, createCatchUpPace } from './catch-up-pace.ts';
import { applyStepRecord, emptyRunState, type RunState } from './run-state.ts';

/** Replays what is stored for a run, then follows new step records live. */
export interface StepLog {
  readonly state: RunState;
  /**
   * A record this router stored on the log, at this stream sequence (the ack of a `dispatched`).
   * A log opened without a read (a first take) holds nothing stored before the run's first
   * dispatch, so its catch-ups start there instead of at the stream's first message.
   */
  stored(seq: number): void;
  /** Waits until a result for `step` is folded in; false when `deadline` (epoch ms) passes or `signal` aborts. */
  waitForResult(step: number, deadline: number, signal: AbortSignal): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * How often a waiting router reads the stored log by sequence while few runs wait in it, for a
 * record core delivery lost (at most once: a reconnect drops what was in flight, and a reconnect
 * reads at once too).
 */
const STEP_LOG_CATCH_UP_MS = 5_000;

/** However many runs wait in a router, each reads its log at least this often. */
const STEP_LOG_CATCH_UP_MAX_MS = 60_000;

/**
 * The catch-ups a router process makes a second, on average, across all the runs it waits on
 * (catch-up-pace.ts): up to 100 waiting runs each reads every 5 s, at 500 every 25 s, from 1,200
 * on every 60 s.
 */
const STEP_LOG_CATCH_UPS_PER_SECOND = 20;

/** The catch-up budget of one router process, shared by its step logs (catch-up-pace.ts). */
export function createStepLogPace(floorMs = STEP_LOG_CATCH_UP_MS): CatchUpPace {
  return createCatchUpPace({
    floorMs,
    ceilingMs: Math.max(floorMs, STEP_LOG_CATCH_UP_MAX_MS),
    perSecond: STEP_LOG_CATCH_UPS_PER_SECOND,
  });
}

/**
 * A run's step log, `run.<runId>.steps`, without a consumer on the server
 * (docs/decisions/0041-broker-work-per-launch.md): a core subscription on the subject receives
 * every record as it is published (a JetStream publish reaches core subscribers too); what was
 * stored before it, or lost in core delivery, is read by sequence, one direct get each. A record
 * folded twice changes nothing (run-state.ts). A run's first take has nothing stored before it:
 * its log opens without a read (docs/decisions/0064-a-launch-reads-back-nothing-it-knows.md).
 */
export async function openStepLog(
  bus: Bus,
  runId: string,
  logger: Logger,
  options: {
    /** The process's catch-up budget, shared by its logs (`createStepLogPace`); default one of this log's own. */
    pace?: CatchUpPace;
    /** The interval of a log's own pace while few wait (tests). */
    catchUpMs?: number;
    /** The live subscription (tests pass one that loses messages). */
    subscribe?: typeof subscribePublished;
    /**
     * Whether records may be stored from before the log opened, known once the run is taken: a
     * router taking a run over reads them; the first take of a run (`idle` → `running`) finds none,
     * since only a router that took the run dispatches its steps, and skips the read. Default yes.
     */
    storedBefore?: Promise<boolean>;
    /**
     * For a read at open: the sequence the run's records come after (just before its
     * `run_started`, run-begin.ts), so a takeover does not read from the stream's first message.
     * Default 0.
     */
    startAfter?: () => Promise<number>;
  } = {},
): Promise<StepLog> {
  const subject = bus.names.steps(runId);
  const stream = bus.names.streams.events;
  const pace = options.pace ?? createStepLogPace(options.catchUpMs);
  let state = emptyRunState;
  /**
   * Where a catch-up starts when nothing was read by sequence yet: a takeover's `startAfter`, a
   * first take's first dispatch (`stored`). Core delivery carries no sequence, so on a first take
   * the log's own position stays 0 until a catch-up reads, and a read from 0 makes nats-server
   * look through every older block of EVENTS, a day of every run's frames, for the run's subject
   * (docs/decisions/0076).
   */
  let floor = 0;
  let readAtOpen = true;
  /** Wakes a waiting `waitForResult` after something was folded. */
  let wake: (() => void) | undefined;
  const fold = (item: { seq: number; envelope: StepRecordEnvelope | undefined; invalid?: Error }) => {
    if (item.envelope) {
      state = applyStepRecord(state, item.envelope, item.seq);
      return;
    }
    logger.error({ seq: item.seq, err: item.invalid }, 'invalid step record skipped');
    // Read past, so the next catch-up does not read it (and log it) again.
    state = { ...state, lastSeq: Math.max(state.lastSeq, item.seq) };
  };
  const catchUp = async () => {
    const stored = await readStored(bus, {
      stream,
      subject,
      schema: StepRecordEnvelope,
      few: RUN_RECORDS_READ_ONE_BY_ONE,
      afterSeq: Math.max(state.lastSeq, floor),
    });
    for (const item of stored) fold(item);
    if (stored.length > 0) wake?.();
  };
  const catchUpLogged = (trigger: 'interval' | 'reconnect') => {
    quillMetrics().stepLogCatchUps.add(1, { trigger });
    return catchUp().catch((error: unknown) =>
      logger.warn({ err: error }, 'step log catch-up failed; tried again'),
    );
  };

  // Subscribed before the stored log is read: a record published in between is seen both ways.
  const live = (options.subscribe ?? subscribePublished)(bus, subject, {
    message(data) {
      try {
        // Core delivery carries no stream sequence: the fold keeps the last one it read.
        fold({ seq: 0, envelope: decodeEnvelope(StepRecordEnvelope, subject, data) });
      } catch (error) {
        if (!(error instanceof InvalidEnvelopeError)) throw error;
        fold({ seq: 0, envelope: undefined, invalid: error });
      }
      wake?.();
    },
    reconnected: () => void catchUpLogged('reconnect'),
  });
  const storedBefore = options.storedBefore ?? Promise.resolve(true);
  // Awaited after the subscription is ready: a failed take must not count as unhandled meanwhile.
  storedBefore.catch(() => undefined);
  try {
    await live.ready;
    readAtOpen = await storedBefore;
    if (readAtOpen) {
      if (options.startAfter) floor = await options.startAfter();
      await catchUp();
    }
  } catch (error) {
    live.close();
    throw error;
  }

  return {
    get state() {
      return state;
    },
    stored(seq) {
      // After a read at open the log's position comes from what it read: a floor could pass
      // over a record stored after that read and lost in core delivery.
      if (readAtOpen || seq <= 0) return;
      floor = floor === 0 ? seq - 1 : Math.min(floor, seq - 1);
    },
    async waitForResult(step, deadline, signal) {
      if (state.results.has(step)) return true;
      const stopWaiting = pace.waiting();
      try {
        while (!state.results.has(step)) {
          const remaining = deadline - Date.now();
          if (remaining <= 0 || signal.aborted) return false;
          const interval = pace.nextIntervalMs();
          let timer: NodeJS.Timeout | undefined;
          let onAbort: (() => void) | undefined;
          const woken = new Promise<'folded' | 'catch_up' | 'stop'>((resolve) => {
            wake = () => resolve('folded');
            timer = setTimeout(
              () => resolve(remaining > interval ? 'catch_up' : 'stop'),
              Math.min(remaining, interval),
            );
            onAbort = () => resolve('stop');
            signal.addEventListener('abort', onAbort, { once: true });
          });
          const why = await woken;
          wake = undefined;
          clearTimeout(timer);
          if (onAbort) signal.removeEventListener('abort', onAbort);
          if (why === 'catch_up') await catchUpLogged('interval');
        }
        return true;
      } finally {
        stopWaiting();
      }
    },
    async close() {
      wake = undefined;
      live.close();
    },
  };
}
