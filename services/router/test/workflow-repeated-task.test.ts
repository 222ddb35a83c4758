import type { AgentRole } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { closingFor } from '../src/workflow/engine.ts';
import { repeatsTask } from '../src/workflow/repeated-task.ts';
import { dispatchedRoles, draft, drive, planOf, result, stateOf } from './workflow-fixtures.ts';

const plan = () => planOf({ workflow_plan: 'standard', current_agent: 'planner' });
// Each agent hands the work to the other one: planner ↔ writer.
const pingPong = (role: AgentRole) => ({
  handoff: { to_agent: role === 'planner' ? ('writer' as const) : ('planner' as const), reason: '你来' },
});

describe('repeated task (planner ↔ writer ping-pong)', () => {
  it('ends the run as repeated_task instead of dispatching the fourth leg of an empty round trip', () => {
    const { actions, state } = drive(plan(), (action) => pingPong(action.role));
    expect(dispatchedRoles(actions)).toEqual(['planner', 'writer', 'planner']);
    expect(actions.at(-1)).toEqual({
      kind: 'finish',
      outcome: { terminal: 'stopped', reason: 'repeated_task' },
    });
    // The closing sees the same fold: the last agent that ran, nothing discarded.
    const closing = closingFor(state, plan(), 12);
    expect(closing.lastAgent).toBe('planner');
    expect(closing.discardedSteps.size).toBe(0);
  });

  it('a file written inside the round trip lets the work go round once more', () => {
    const { actions } = drive(plan(), (action) => ({
      ...pingPong(action.role),
      ...(action.step === 1 ? { files_written: [draft(300)] } : {}),
    }));
    // Step 1 wrote, so step 3 (writer) runs; steps 2 and 3 then wrote nothing, so the planner's
    // step 4 is the repeat and is refused.
    expect(dispatchedRoles(actions)).toEqual(['planner', 'writer', 'planner', 'writer']);
    expect(actions.at(-1)).toEqual({
      kind: 'finish',
      outcome: { terminal: 'stopped', reason: 'repeated_task' },
    });
  });

  it('the collaboration cap still wins when it comes first', () => {
    const { actions } = drive(plan(), (action) => pingPong(action.role), 3);
    expect(dispatchedRoles(actions)).toEqual(['planner', 'writer', 'planner']);
    expect(actions.at(-1)).toMatchObject({ outcome: { terminal: 'stopped', reason: 'collaboration_cap' } });
  });
});

describe('repeatsTask: the rule over the last three steps', () => {
  const steps = (...roles: AgentRole[]) => stateOf(roles.map((role, step) => result(step, role))).results;

  it('matches O, R, O before R with nothing written by the last two', () => {
    expect(repeatsTask(steps('planner', 'writer', 'planner'), { step: 3, role: 'writer' })).toBe(true);
  });

  it('leaves review rounds to the review-round cap: the reviewer writes no file by design', () => {
    expect(
      repeatsTask(steps('writer', 'quality_reviewer', 'writer'), { step: 3, role: 'quality_reviewer' }),
    ).toBe(false);
    expect(
      repeatsTask(steps('quality_reviewer', 'writer', 'quality_reviewer'), { step: 3, role: 'writer' }),
    ).toBe(false);
  });

  it('does not match fewer than three steps, a third agent, or the same agent in a row', () => {
    expect(repeatsTask(steps('writer', 'planner'), { step: 2, role: 'writer' })).toBe(false);
    expect(repeatsTask(steps('hook_designer', 'writer', 'planner'), { step: 3, role: 'writer' })).toBe(false);
    expect(repeatsTask(steps('planner', 'writer', 'planner'), { step: 3, role: 'hook_designer' })).toBe(
      false,
    );
    // A continuation (writer after writer) is not a round trip.
    expect(repeatsTask(steps('writer', 'writer', 'writer'), { step: 3, role: 'writer' })).toBe(false);
  });

  it('a file written by either of the last two steps is progress', () => {
    const wrote = (at: number) =>
      stateOf(
        (['planner', 'writer', 'planner'] as const).map((role, step) =>
          result(step, role, step === at ? { files_written: [draft(10, 'outline')] } : {}),
        ),
      ).results;
    expect(repeatsTask(wrote(1), { step: 3, role: 'writer' })).toBe(false);
    expect(repeatsTask(wrote(2), { step: 3, role: 'writer' })).toBe(false);
    // What the first leg wrote is not part of the round trip.
    expect(repeatsTask(wrote(0), { step: 3, role: 'writer' })).toBe(true);
  });
});
