import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkTransition, Phase, type PhaseSubject } from '../src/index.ts';
import {
  INITIAL_PHASE,
  isFinalRunPhase,
  PHASE_TRANSITIONS,
  phasesLeadingTo,
} from '../src/phase-transitions.ts';

const PHASES = Phase.options;
type Pair = [Phase, Phase];

/** The whole table written out pair by pair, so a change to it has to change this list too. */
const LEGAL: Record<PhaseSubject, Pair[]> = {
  run: [
    ['idle', 'running'],
    ['idle', 'error'],
    ['running', 'done'],
    ['running', 'error'],
    ['running', 'waiting_user'],
    ['waiting_user', 'done'],
    ['waiting_user', 'error'],
  ],
  session: [
    ['idle', 'running'],
    ['running', 'done'],
    ['running', 'error'],
    ['running', 'waiting_user'],
    ['waiting_user', 'running'],
    ['waiting_user', 'done'],
    ['waiting_user', 'error'],
    ['done', 'running'],
    ['done', 'waiting_user'],
    ['error', 'running'],
    ['error', 'waiting_user'],
  ],
};

const isLegal = (subject: PhaseSubject, from: Phase, to: Phase) =>
  LEGAL[subject].some(([a, b]) => a === from && b === to);

describe('phase transition table', () => {
  for (const subject of ['run', 'session'] as const) {
    it(`${subject}: every one of the 25 pairs is applied, unchanged or refused as the table says`, () => {
      for (const from of PHASES) {
        for (const to of PHASES) {
          const verdict = checkTransition(subject, from, to);
          if (from === to) expect(verdict, `${from}->${to}`).toEqual({ kind: 'unchanged' });
          else if (isLegal(subject, from, to)) expect(verdict, `${from}->${to}`).toEqual({ kind: 'apply' });
          else expect(verdict, `${from}->${to}`).toMatchObject({ kind: 'illegal', from, to });
        }
      }
    });

    it(`${subject}: phasesLeadingTo is the inverse of the table`, () => {
      for (const to of PHASES) {
        expect(phasesLeadingTo(subject, to).sort()).toEqual(
          LEGAL[subject]
            .filter(([, b]) => b === to)
            .map(([a]) => a)
            .sort(),
        );
      }
    });

    it(`${subject}: every phase is reachable from the initial one`, () => {
      const seen = new Set<Phase>([INITIAL_PHASE[subject]]);
      for (let changed = true; changed; ) {
        changed = false;
        for (const [from, to] of LEGAL[subject]) {
          if (seen.has(from) && !seen.has(to)) {
            seen.add(to);
            changed = true;
          }
        }
      }
      expect([...seen].sort()).toEqual([...PHASES].sort());
    });
  }

  it('runs: done and error are final, the others are not', () => {
    expect(PHASES.filter(isFinalRunPhase).sort()).toEqual(['done', 'error']);
    expect(PHASE_TRANSITIONS.run.done).toEqual([]);
  });

  it('runs never go back to idle and never leave a final phase, for any sequence of writes', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PHASES), { maxLength: 30 }), (writes) => {
        let phase: Phase = INITIAL_PHASE.run;
        const visited: Phase[] = [phase];
        for (const to of writes) {
          if (checkTransition('run', phase, to).kind === 'apply') {
            phase = to;
            visited.push(phase);
          }
        }
        // idle only at the start; nothing after the first final phase.
        expect(visited.indexOf('idle', 1)).toBe(-1);
        const final = visited.findIndex(isFinalRunPhase);
        if (final !== -1) expect(final).toBe(visited.length - 1);
      }),
    );
  });

  it('sessions: a session in any phase reached by legal writes can always start a run again', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PHASES), { maxLength: 30 }), (writes) => {
        let phase: Phase = INITIAL_PHASE.session;
        for (const to of writes) if (checkTransition('session', phase, to).kind === 'apply') phase = to;
        // From wherever it rests, a new run (running) is legal or the session is already running.
        expect(phase === 'running' || checkTransition('session', phase, 'running').kind === 'apply').toBe(
          true,
        );
      }),
    );
  });
});
