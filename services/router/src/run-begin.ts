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
 * from the stream's end. A run taken over has newer frames, and is found from its launch time
 * instead (`runStartSeq`: a consumer made by time, and one get), once and only when asked.
 * Undefined when neither finds it; the readers then read from the launch time themselves.
 */
export function findRunBegin(bus: Bus, start: RunStartEnvelope): () => Promise<number | undefined> {
  const newest = runStartedIfNewest(bus, start.run_id).catch(() => undefined);
  let found: Promise<number | undefined> | undefined;
  const fromLaunchTime = async () => {
    const before = await runStartSeq(bus, start.run_id, start.created_at);
    return before > 0 ? before + 1 : undefined;
  };
  return () => {
    found ??= newest.then((seq) => seq ?? fromLaunchTime());
    return found;
  };
}
