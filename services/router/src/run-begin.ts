import { type Bus, runStartedIfNewest, runStartSeq } from '@quill/bus';
import type { RunStartEnvelope } from '@quill/contracts';

/**
 * Where a run's record begins on `EVENTS`: the sequence of its `run_started`. Every later read of
 * the run starts there: a takeover's step log, billing's settlement, the archive of a long run
 * (docs/decisions/0077).
 *
 * The look-up starts as soon as the router takes the run, alongside the take's own reads. The
 * launch stores `run_started` before it queues the run, and nothing else publishes to the run's
 * frames before this router does, so on a first take it is the run's newest frame: one direct get
 * from the stream's end.
 */
export interface RunBegin {
  /**
   * For a takeover's step log: the get's answer, or, for a run whose newest frame is a later one,
   * a search from its launch time (`runStartSeq`: a consumer made by time, and one get), made once.
   */
  find(): Promise<number | undefined>;
  /**
   * For the run's end: what is known without a new search (the get's answer, or the search's once
   * `find` made it). The end does not search: its terminal frame would wait for the read, and
   * billing reads from the launch time itself for the same cost. Never rejects.
   */
  known(): Promise<number | undefined>;
}

export function findRunBegin(bus: Bus, start: RunStartEnvelope): RunBegin {
  const newest = runStartedIfNewest(bus, start.run_id).catch(() => undefined);
  let searched: Promise<number | undefined> | undefined;
  const fromLaunchTime = async () => {
    const before = await runStartSeq(bus, start.run_id, start.created_at);
    return before > 0 ? before + 1 : undefined;
  };
  return {
    find: () => {
      searched ??= newest.then((seq) => seq ?? fromLaunchTime());
      return searched;
    },
    known: () => (searched ? searched.catch(() => undefined) : newest),
  };
}
