import { describe, expect, it } from 'vitest';
import { closingFor, nextAction, type WorkflowAction } from '../src/workflow/engine.ts';
import { buildReply, releasedText } from '../src/workflow/held-text.ts';
import { dispatchedRoles, draft, drive, planOf, result, stateOf } from './workflow-fixtures.ts';

type Dispatch = Extract<WorkflowAction, { kind: 'dispatch' }>;
const dispatches = (actions: WorkflowAction[]) =>
  actions.filter((action): action is Dispatch => action.kind === 'dispatch');
const last = (actions: WorkflowAction[]) => actions.at(-1)!;

describe('plans (WORKFLOW_AGENTS)', () => {
  it.each([
    ['quick', 'writer', ['writer']],
    ['standard', 'planner', ['planner', 'writer']],
    ['full', 'planner', ['planner', 'hook_designer', 'writer']],
    ['hook_focus', 'hook_designer', ['hook_designer', 'writer']],
    ['review_only', 'quality_reviewer', ['quality_reviewer']],
  ] as const)('%s runs %s first, then the plan, then completes', (plan, first, roles) => {
    const { actions } = drive(planOf({ workflow_plan: plan, current_agent: first }), () => ({}));
    expect(dispatchedRoles(actions)).toEqual(roles);
    expect(last(actions)).toEqual({ kind: 'finish', outcome: { terminal: 'complete' } });
    // Planned handoffs carry a handoff note between different agents.
    const handoffs = dispatches(actions)
      .slice(1)
      .map((action) => action.handoff);
    expect(handoffs.map((handoff) => [handoff?.from, handoff?.to])).toEqual(
      roles.slice(1).map((role, index) => [roles[index], role]),
    );
    expect(
      dispatches(actions)
        .slice(1)
        .every((action) => action.planned.kind === 'planned'),
    ).toBe(true);
  });

  it('write_content=false drops the writer; read_only empties the plan', () => {
    const noWriting = drive(
      planOf({ workflow_plan: 'standard', current_agent: 'planner', write_content: false }),
      () => ({}),
    );
    expect(dispatchedRoles(noWriting.actions)).toEqual(['planner']);
    const readOnly = drive(
      planOf({ workflow_plan: 'full', current_agent: 'writer', read_only: true }),
      () => ({}),
    );
    expect(dispatchedRoles(readOnly.actions)).toEqual(['writer']);
    expect(dispatches(readOnly.actions)[0]!.planned).toMatchObject({ readOnly: true, holdChat: false });
  });

  it('stops at the collaboration cap', () => {
    const { actions } = drive(planOf({ workflow_plan: 'full', current_agent: 'planner' }), () => ({}), 2);
    expect(dispatchedRoles(actions)).toEqual(['planner', 'hook_designer']);
    expect(last(actions)).toEqual({
      kind: 'finish',
      outcome: { terminal: 'stopped', reason: 'collaboration_cap' },
    });
    // 「继续」 later resumes with the agent the cap kept from running.
    const plan = planOf({ workflow_plan: 'full', current_agent: 'planner' });
    expect(closingFor(drive(plan, () => ({}), 2).state, plan, 2).lastAgent).toBe('writer');
  });

  it('waits for a dispatched step and finishes on a failed one', () => {
    const plan = planOf({});
    expect(nextAction(stateOf([], [0]), plan, 12)).toEqual({ kind: 'wait', step: 0 });
    const failed = stateOf([
      result(0, 'writer', { outcome: 'failed', stop_reason: 'error', error_code: 'model_error' }),
    ]);
    expect(nextAction(failed, plan, 12)).toEqual({
      kind: 'finish',
      outcome: { terminal: 'error', code: 'model_error' },
    });
  });
});

describe('auto review gate', () => {
  const quality = (threshold = 500, extra = {}) =>
    planOf({ workflow_plan: 'quick', current_agent: 'writer', ...extra }, { mode: 'quality', threshold });

  it('sends a writer delivery at or over the threshold to quality_reviewer, once', () => {
    const { actions } = drive(quality(500), (action) =>
      action.role === 'writer' ? { files_written: [draft(500)] } : {},
    );
    expect(dispatchedRoles(actions)).toEqual(['writer', 'quality_reviewer']);
    expect(dispatches(actions)[1]).toMatchObject({
      planned: { kind: 'review_gate', review: true },
      handoff: { from: 'writer' },
    });
  });

  it('does not review below the threshold, in fast mode, or when every write failed', () => {
    expect(dispatchedRoles(drive(quality(500), () => ({ files_written: [draft(499)] })).actions)).toEqual([
      'writer',
    ]);
    const fast = planOf({}, { mode: 'fast' });
    expect(dispatchedRoles(drive(fast, () => ({ files_written: [draft(5000)] })).actions)).toEqual([
      'writer',
    ]);
    expect(dispatchedRoles(drive(quality(0), () => ({ files_written: [] })).actions)).toEqual(['writer']);
  });

  it('counts only draft / script bodies, accumulated over the plan prefix', () => {
    const plan = planOf(
      { workflow_plan: 'standard', current_agent: 'planner' },
      { mode: 'quality', threshold: 500 },
    );
    const outlineOnly = drive(plan, (action) => ({
      files_written: action.role === 'planner' ? [draft(2000, 'outline')] : [draft(300)],
    }));
    expect(dispatchedRoles(outlineOnly.actions)).toEqual(['planner', 'writer']);
    const prefix = drive(plan, () => ({ files_written: [draft(300)] }));
    expect(dispatchedRoles(prefix.actions)).toEqual(['planner', 'writer', 'quality_reviewer']);
  });

  it('a read-only role in between does not reset the count; an out-of-plan jump does not add to it', () => {
    // writer (300) → explicit reviewer → back to writer (revision, not counted, not auto-reviewed)
    const plan = planOf(
      { workflow_plan: 'full', current_agent: 'planner' },
      { mode: 'quality', threshold: 500 },
    );
    const viaReviewer = drive(plan, (action) => {
      if (action.role === 'planner')
        return { files_written: [draft(300)], handoff: { to_agent: 'quality_reviewer', reason: '先看看' } };
      if (action.step === 1) return { handoff: { to_agent: 'hook_designer', reason: '继续' } };
      if (action.role === 'hook_designer') return { files_written: [draft(250)] };
      return {};
    });
    // The planner's 300 + hook_designer's 250 reach the gate after the writer, even with the
    // reviewer visited in between; the reviewer's jump back to hook_designer is along the plan.
    expect(dispatchedRoles(viaReviewer.actions)).toEqual([
      'planner',
      'quality_reviewer',
      'hook_designer',
      'writer',
      'quality_reviewer',
    ]);
    const outOfPlan = drive(planOf({}, { mode: 'quality', threshold: 500 }), (action) => {
      if (action.step === 0) return { handoff: { to_agent: 'planner', reason: '先规划' } };
      if (action.role === 'planner')
        return { files_written: [draft(900)], handoff: { to_agent: 'writer', reason: '写吧' } };
      return { files_written: [draft(100)] };
    });
    // The planner was reached outside the plan: its 900 chars do not count, 100 is under 500.
    expect(dispatchedRoles(outOfPlan.actions)).toEqual(['writer', 'planner', 'writer']);
  });

  it('caps review rounds and never re-reviews a revision automatically', () => {
    const plan = planOf({}, { mode: 'quality', threshold: 100 });
    const { actions } = drive(plan, (action) => {
      if (action.role === 'quality_reviewer') return { handoff: { to_agent: 'writer', reason: '返修' } };
      if (action.planned.revision)
        return { files_written: [draft(800)], handoff: { to_agent: 'quality_reviewer', reason: '再看' } };
      return { files_written: [draft(800)] };
    });
    expect(dispatchedRoles(actions)).toEqual([
      'writer',
      'quality_reviewer',
      'writer',
      'quality_reviewer',
      'writer',
    ]);
    expect(last(actions)).toEqual({ kind: 'finish', outcome: { terminal: 'complete' } });
    const revisionsOnly = drive(plan, (action) =>
      action.role === 'quality_reviewer' && action.step === 1
        ? { handoff: { to_agent: 'writer', reason: '返修' } }
        : { files_written: [draft(800)] },
    );
    expect(dispatchedRoles(revisionsOnly.actions)).toEqual(['writer', 'quality_reviewer', 'writer']);
  });
});

describe('held chat text (CHAT_HOLD)', () => {
  it('holds only for a quality writer that may go to review, never for revisions', () => {
    const holds = (plan: ReturnType<typeof planOf>) =>
      dispatches(drive(plan, () => ({})).actions)[0]!.planned.holdChat;
    expect(holds(planOf({}, { mode: 'quality' }))).toBe(true);
    expect(holds(planOf({}, { mode: 'fast' }))).toBe(false);
    expect(holds(planOf({}, { mode: 'quality', first_message: true }))).toBe(false);
    expect(holds(planOf({ read_only: true }, { mode: 'quality' }))).toBe(false);
  });

  it('discards the held text when the review really happens and passes the writer questions on', () => {
    const plan = planOf({}, { mode: 'quality' });
    const { actions, results, state } = drive(plan, (action) =>
      action.role === 'writer'
        ? {
            files_written: [draft(800)],
            final_text: '开头。写好了。要不要加一场雨？你觉得呢？',
            held_text: '写好了。要不要加一场雨？你觉得呢？',
            // Only the question recorded as data goes on; question marks in prose do not count.
            author_questions: ['要不要加一场雨？'],
          }
        : { final_text: '审查结论：通过。' },
    );
    const review = dispatches(actions)[1]!;
    expect(review.release).toEqual([]);
    expect(review.planned.writerQuestions).toEqual(['要不要加一场雨？']);
    const closing = closingFor(state, plan, 12);
    expect(closing.release).toEqual([]);
    expect([...closing.discardedSteps]).toEqual([0]);
    expect(buildReply(results, closing.discardedSteps)).toBe('开头。\n\n审查结论：通过。');
  });

  it('forwards no question guessed from prose, and shows typed questions when nothing is discarded', () => {
    const reviewed = drive(planOf({}, { mode: 'quality' }), (action) =>
      action.role === 'writer'
        ? { files_written: [draft(800)], final_text: '写好了。要不要加雨？', held_text: '要不要加雨？' }
        : {},
    );
    expect(dispatches(reviewed.actions)[1]!.planned.writerQuestions).toEqual([]);
    const plan = planOf({}, { mode: 'quality', threshold: 5000 });
    const kept = drive(plan, () => ({
      files_written: [draft(800)],
      final_text: '写好了。',
      author_questions: ['主角要改名吗？'],
    }));
    const closing = closingFor(kept.state, plan, 12);
    expect(closing.release).toEqual([{ step: 0, role: 'writer', text: '', questions: ['主角要改名吗？'] }]);
    expect(releasedText(closing.release[0]!)).toBe('- 主角要改名吗？');
    expect(buildReply(kept.results, closing.discardedSteps)).toBe('写好了。\n\n- 主角要改名吗？');
  });

  it('releases the held text unchanged when no review follows', () => {
    const plan = planOf({}, { mode: 'quality', threshold: 5000 });
    const { results, state } = drive(plan, () => ({
      files_written: [draft(800)],
      final_text: 'A。B',
      held_text: 'B',
    }));
    const closing = closingFor(state, plan, 12);
    expect(closing.release).toEqual([{ step: 0, role: 'writer', text: 'B' }]);
    expect(buildReply(results, closing.discardedSteps)).toBe('A。B');
  });

  it('releases before an explicit handoff to a non-reviewer, and on a stop mid-run', () => {
    const plan = planOf({}, { mode: 'quality' });
    const jump = drive(plan, (action) =>
      action.step === 0
        ? { held_text: '等一下', final_text: '等一下', handoff: { to_agent: 'planner', reason: '补大纲' } }
        : {},
    );
    expect(dispatches(jump.actions)[1]!.release).toEqual([{ step: 0, role: 'writer', text: '等一下' }]);
    // Continuation keeps holding; a stop while it runs releases what was held.
    const held = [
      result(0, 'writer', {
        files_written: [draft(100)],
        ended_on_file_block: true,
        held_text: 'x',
        final_text: 'x',
      }),
    ];
    const running = stateOf(held, [1]);
    expect(nextAction(running, plan, 12)).toEqual({ kind: 'wait', step: 1 });
    expect(closingFor(running, plan, 12).release).toEqual([{ step: 0, role: 'writer', text: 'x' }]);
  });

  it('keeps holding along the plan prefix and discards every held text when the delivery reaches review', () => {
    const plan = planOf(
      { workflow_plan: 'standard', current_agent: 'planner' },
      { mode: 'quality', threshold: 500 },
    );
    const { actions, state } = drive(plan, (action) =>
      action.role === 'planner'
        ? { files_written: [draft(300)], final_text: '样章。写好了样章', held_text: '写好了样章' }
        : action.role === 'writer'
          ? { files_written: [draft(300)], final_text: '正文好了', held_text: '正文好了' }
          : {},
    );
    expect(
      dispatches(actions).map((action) => [action.role, action.planned.holdChat, action.release.length]),
    ).toEqual([
      ['planner', true, 0],
      ['writer', true, 0],
      ['quality_reviewer', false, 0],
    ]);
    expect([...closingFor(state, plan, 12).discardedSteps]).toEqual([0, 1]);
  });

  it('a discard only stands when the reviewer was really dispatched', () => {
    const plan = planOf({}, { mode: 'quality' });
    const state = stateOf([
      result(0, 'writer', { files_written: [draft(800)], held_text: 'q', final_text: 'q' }),
    ]);
    expect(nextAction(state, plan, 12)).toMatchObject({ kind: 'dispatch', role: 'quality_reviewer' });
    const closing = closingFor(state, plan, 12);
    expect(closing.release).toEqual([{ step: 0, role: 'writer', text: 'q' }]);
    expect(closing.discardedSteps.size).toBe(0);
  });
});

describe('handoffs, scope and special rounds', () => {
  it('blocks handoffs to write-capable agents on read-only requests, not to the reviewer', () => {
    const plan = planOf({ read_only: true });
    const blocked = drive(plan, () => ({ handoff: { to_agent: 'planner', reason: '改大纲' } }));
    expect(dispatchedRoles(blocked.actions)).toEqual(['writer']);
    expect(closingFor(blocked.state, plan, 12).readOnlyBlocked).toBe(true);
    const toReviewer = drive(plan, (action) =>
      action.step === 0 ? { handoff: { to_agent: 'quality_reviewer', reason: '看看' } } : {},
    );
    expect(dispatchedRoles(toReviewer.actions)).toEqual(['writer', 'quality_reviewer']);
    expect(closingFor(toReviewer.state, plan, 12).readOnlyBlocked).toBe(false);
  });

  it('ends waiting for the author on a clarification request', () => {
    const plan = planOf({ workflow_plan: 'standard', current_agent: 'planner' });
    const { actions, state } = drive(plan, () => ({
      clarification: { question: '主角叫什么？' },
      final_text: '想问一下。',
    }));
    expect(dispatchedRoles(actions)).toEqual(['planner']);
    expect(last(actions)).toEqual({
      kind: 'finish',
      outcome: { terminal: 'stopped', reason: 'waiting_user' },
    });
    expect(closingFor(state, plan, 12).clarification).toEqual({ agent: 'planner', question: '主角叫什么？' });
  });

  it('question marks in prose never stop the plan', () => {
    const plan = planOf({ workflow_plan: 'standard', current_agent: 'planner' });
    const { actions } = drive(plan, () => ({ final_text: '你觉得这样行吗？' }));
    expect(dispatchedRoles(actions)).toEqual(['planner', 'writer']);
  });

  it('drops handoffs on clarify-first runs', () => {
    const plan = planOf({ workflow_agents: [] }, { clarify_first: true });
    const { actions } = drive(plan, () => ({ handoff: { to_agent: 'planner', reason: 'x' } }));
    expect(dispatchedRoles(actions)).toEqual(['writer']);
    expect(dispatches(actions)[0]!.planned.clarifyFirst).toBe(true);
  });

  it('continues the same agent after a run that ended on a completed file block, within the cap', () => {
    const plan = planOf({ workflow_plan: 'standard', current_agent: 'planner' });
    let continued = 0;
    const { actions } = drive(plan, (action) => {
      if (action.role === 'planner' && continued++ < 2)
        return { files_written: [draft(100, 'outline')], ended_on_file_block: true };
      return {};
    });
    expect(dispatches(actions).map((action) => [action.role, action.planned.kind])).toEqual([
      ['planner', 'initial'],
      ['planner', 'continuation'],
      ['planner', 'continuation'],
      ['writer', 'planned'],
    ]);
    expect(dispatches(actions)[1]!.handoff).toBeUndefined();
    const capped = drive(planOf({}), () => ({ files_written: [draft(100)], ended_on_file_block: true }), 3);
    expect(dispatchedRoles(capped.actions)).toEqual(['writer', 'writer', 'writer']);
    expect(last(capped.actions)).toEqual({ kind: 'finish', outcome: { terminal: 'complete' } });
    // No continuation without a saved file, after a handoff request, or on read-only requests.
    expect(dispatchedRoles(drive(planOf({}), () => ({ ended_on_file_block: true })).actions)).toEqual([
      'writer',
    ]);
  });

  it('first message: no auto review, the writer review handoff is dropped, one summary round', () => {
    const plan = planOf({}, { mode: 'quality', first_message: true, threshold: 100 });
    const { actions } = drive(plan, (action) =>
      action.planned.kind === 'summary'
        ? { final_text: '写好了第一章。' }
        : { files_written: [draft(900)], handoff: { to_agent: 'quality_reviewer', reason: '请审' } },
    );
    expect(dispatches(actions).map((action) => [action.role, action.planned.kind])).toEqual([
      ['writer', 'initial'],
      ['writer', 'summary'],
    ]);
    // With text already written to the author there is no summary round.
    const spoke = drive(plan, () => ({
      files_written: [draft(900)],
      final_text: '写好了。',
      handoff: { to_agent: 'quality_reviewer', reason: '请审' },
    }));
    expect(dispatchedRoles(spoke.actions)).toEqual(['writer']);
    // A review the router planned still happens on the first message.
    const planned = planOf(
      { workflow_plan: 'review_only', current_agent: 'quality_reviewer' },
      { first_message: true },
    );
    expect(dispatchedRoles(drive(planned, () => ({})).actions)).toEqual(['quality_reviewer']);
  });
});
