import type { Phase } from '@quill/contracts';
import { type FinishRunInput, getActiveRunForSession, type PhaseWrite, type Queryable } from '@quill/db';
import { answerSessionIfSettled, endRunAndSession, setSessionPhase, takeRun } from '@quill/db/router';
import type { Logger } from 'pino';

/** What a take answers (the entry exports only the functions that write). */
type TakenRun = Awaited<ReturnType<typeof takeRun>>;
/** What a run's end writes and reads besides the phases (libs/db/src/router/run-end.ts). */
type RunEndOptions = NonNullable<Parameters<typeof endRunAndSession>[3]>;

/**
 * The router's phase writes, the only ones in the system (docs/architecture.md "Phases"). Each
 * goes through the transition table in libs/db; an illegal move is refused there and logged
 * here with where it came from, never applied.
 */
export interface PhaseWriter {
  /**
   * A router takes the run: run `idle` → `running`, its session → `running`, read and written in
   * one statement. `found` is the row as it was (a takeover finds it `running`, a run that
   * ended is left as it is and is not an error: its last router may have died before its ack).
   */
  takeRun(runId: string): Promise<TakenRun>;
  /**
   * The run ended (`done`, `error`) or rests waiting for the author (`waiting_user`); the session
   * follows unless another run of it is active (a lapsed lock let the next one start) or the
   * run never left `idle`. The round's reply and the acceptance read go with it (RunEndOptions).
   */
  endRun(
    run: { runId: string; sessionId: string },
    input: FinishRunInput,
    options?: RunEndOptions,
  ): Promise<EndedRun>;
  /** The session's author owes an answer: a clarification, or AI output waiting for acceptance. */
  sessionAwaitsAuthor(sessionId: string, options?: { clarificationPending?: boolean }): Promise<PhaseWrite>;
  /** The author accepted or rejected what was pending: the session rests `done` again. */
  sessionAnswered(sessionId: string): Promise<PhaseWrite>;
  /** The run ended leaving AI output to accept: its session waits, unless another run of it is active. */
  sessionAwaitsAcceptance(run: { runId: string; sessionId: string }): Promise<PhaseWrite | undefined>;
  /** `done` again if the session waited for acceptance alone and nothing is left open. */
  sessionReviewed(sessionId: string): Promise<PhaseWrite>;
  setSession(
    sessionId: string,
    phase: Phase,
    options?: { clarificationPending?: boolean },
  ): Promise<PhaseWrite>;
}

/** The run's move, and whether AI output of its session now waits for the author (read with it). */
export type EndedRun = PhaseWrite & { awaitsAcceptance: boolean };

export function createPhaseWriter(db: Queryable, logger: Logger): PhaseWriter {
  const report = (subject: 'run' | 'session', id: string, write: PhaseWrite, why: string): PhaseWrite => {
    if (write.kind === 'illegal') {
      logger.error(
        { [`${subject}_id`]: id, from: write.from, to: write.to, why },
        `illegal ${subject} phase transition refused`,
      );
    } else if (write.kind === 'missing') {
      logger.warn({ [`${subject}_id`]: id, why }, `phase write for an unknown ${subject}`);
    }
    return write;
  };

  const setSession: PhaseWriter['setSession'] = async (sessionId, phase, options = {}) =>
    report('session', sessionId, await setSessionPhase(db, sessionId, phase, options), `session → ${phase}`);

  return {
    async takeRun(runId) {
      // Run and session in one statement: it is on the way to the first token.
      const taken = await takeRun(db, runId);
      if (taken.session && taken.found)
        report('session', taken.found.sessionId, taken.session, 'taken by a router');
      return taken;
    },
    async endRun(run, input, options = {}) {
      // Run and session in one statement: it is on the way to the run's `done`. A run that never
      // left `idle` never took its session (it moves at pickup), and a session another run of
      // which is active is that run's.
      const ended = await endRunAndSession(db, run, input, options);
      report('run', run.runId, ended.run, `run → ${input.phase}`);
      if (ended.session) report('session', run.sessionId, ended.session, `session → ${input.phase}`);
      return { ...ended.run, awaitsAcceptance: ended.awaitsAcceptance };
    },
    sessionAwaitsAuthor: (sessionId, options = {}) => setSession(sessionId, 'waiting_user', options),
    sessionAnswered: (sessionId) => setSession(sessionId, 'done', { clarificationPending: false }),
    async sessionAwaitsAcceptance(run) {
      const other = await getActiveRunForSession(db, run.sessionId);
      if (other && other.runId !== run.runId) return undefined;
      return setSession(run.sessionId, 'waiting_user');
    },
    sessionReviewed: async (sessionId) =>
      report('session', sessionId, await answerSessionIfSettled(db, sessionId), 'acceptance settled'),
    setSession,
  };
}
