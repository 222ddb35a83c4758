/**
 * How often a router's step logs read their stored records again, for a record that core
 * delivery lost (step-log.ts). Each waiting log used to read every few seconds on its own, so a
 * router's reads grew with the runs it held, not with what was lost: at 300 streaming runs, 60
 * gets by sequence a second that nearly always found nothing, most of the router's CPU while its
 * runs streamed (docs/decisions/0078-step-log-catch-ups-on-a-budget.md). A process
 * now spends a budget of reads a second across all the logs waiting in it: with few waiting, each
 * reads as often as before; with many, each reads less often, up to a longest interval that
 * bounds how late a lost record is found. A reconnect still makes every log read at once.
 */
export interface CatchUpPace {
  /** A log starts waiting for a result; the returned function says it stopped (once). */
  waiting(): () => void;
  /** How long the next wait before a catch-up is, spread so waits begun together do not read together. */
  nextIntervalMs(): number;
  /** The logs waiting now. */
  readonly waitingNow: number;
}

export interface CatchUpPaceSettings {
  /** A log's interval between catch-ups while few wait (on average: intervals are spread). */
  floorMs: number;
  /** The longest interval, however many wait: above `ceilingMs × perSecond / 1000` logs the budget gives way. */
  ceilingMs: number;
  /** The most catch-ups the process makes a second, on average, across its waiting logs. */
  perSecond: number;
  /** For tests: a number in [0, 1). */
  random?: () => number;
}

/**
 * The mean interval of each of `waiting` logs: at most `perSecond` reads a second in all, never
 * more often than `floorMs` apart and never longer than `ceilingMs`.
 */
export function catchUpIntervalMs(
  waiting: number,
  settings: Pick<CatchUpPaceSettings, 'floorMs' | 'ceilingMs' | 'perSecond'>,
): number {
  const budgeted = Math.ceil((waiting * 1000) / settings.perSecond);
  return Math.min(settings.ceilingMs, Math.max(settings.floorMs, budgeted));
}

/** The interval's spread around its mean: a quarter either way. */
const SPREAD = 0.25;

export function createCatchUpPace(settings: CatchUpPaceSettings): CatchUpPace {
  const random = settings.random ?? Math.random;
  let waitingNow = 0;
  return {
    waiting() {
      waitingNow++;
      let stopped = false;
      return () => {
        if (stopped) return;
        stopped = true;
        waitingNow--;
      };
    },
    nextIntervalMs() {
      const mean = catchUpIntervalMs(waitingNow, settings);
      return Math.min(settings.ceilingMs, Math.round(mean * (1 - SPREAD + 2 * SPREAD * random())));
    },
    get waitingNow() {
      return waitingNow;
    },
  };
}
