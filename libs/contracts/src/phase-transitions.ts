import type { Phase } from './roles.ts';

/**
 * The one transition table of the five-phase machine, for runs and for sessions (see
 * docs/architecture.md "Phases"). Every phase write goes through `checkTransition`; the router
 * is the only service that moves phases, and a refused transition is logged, never applied.
 */
export type PhaseSubject = 'run' | 'session';

/**
 * Runs: `idle` from the moment the gateway opens them (credit reserved, not yet taken by a
 * router) until a router takes them (`running`); a run ends `done`, `error`, or rests in
 * `waiting_user` until the author's next message closes it (`done`). `done` and `error` are final.
 *
 * Sessions: `idle` until their first run, `running` while a run moves, then the end phase of
 * that run (`done`, `error`) or `waiting_user` while the author owes an answer (a clarification
 * question, or AI output waiting for acceptance). A session is never final: the next run takes it
 * from any resting phase back to `running`.
 */
export const PHASE_TRANSITIONS: Readonly<Record<PhaseSubject, Readonly<Record<Phase, readonly Phase[]>>>> = {
  run: {
    idle: ['running', 'error'],
    running: ['done', 'error', 'waiting_user'],
    waiting_user: ['done', 'error'],
    done: [],
    error: [],
  },
  session: {
    idle: ['running'],
    running: ['done', 'error', 'waiting_user'],
    waiting_user: ['running', 'done', 'error'],
    done: ['running', 'waiting_user'],
    error: ['running', 'waiting_user'],
  },
};

/** The phase a new run or session starts in. */
export const INITIAL_PHASE: Readonly<Record<PhaseSubject, Phase>> = { run: 'idle', session: 'idle' };

export type TransitionVerdict =
  /** Apply the write. */
  | { kind: 'apply' }
  /** Already there: a retried or duplicated write (a takeover, a redelivery) changes nothing. */
  | { kind: 'unchanged' }
  /** Not in the table: refuse and log. */
  | { kind: 'illegal'; from: Phase; to: Phase; allowed: readonly Phase[] };

export function checkTransition(subject: PhaseSubject, from: Phase, to: Phase): TransitionVerdict {
  if (from === to) return { kind: 'unchanged' };
  const allowed = PHASE_TRANSITIONS[subject][from];
  return allowed.includes(to) ? { kind: 'apply' } : { kind: 'illegal', from, to, allowed };
}

/** The phases a write to `to` may start from (for a compare-and-set `WHERE phase = ANY(...)`). */
export function phasesLeadingTo(subject: PhaseSubject, to: Phase): Phase[] {
  const table = PHASE_TRANSITIONS[subject];
  return (Object.keys(table) as Phase[]).filter((from) => table[from].includes(to));
}

/** True when a run in this phase can never move again. */
export function isFinalRunPhase(phase: Phase): boolean {
  return PHASE_TRANSITIONS.run[phase].length === 0;
}

/** What a session becomes when its run ends in `runPhase` (the run's end is the session's rest). */
export function sessionPhaseAfterRun(runPhase: 'done' | 'error' | 'waiting_user'): Phase {
  return runPhase;
}
