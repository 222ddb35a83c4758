import { type ChatMessage, frame, type ToolCall } from '@quill/contracts';
import { wroteBodyInline } from './empty-file-round.ts';
import { fileSavedFrame } from './model-turn.ts';
import { countRepeatedReads, REPEATED_READ_LIMIT } from './no-progress-guard.ts';
import { continuationAfter, mayKeepOpen } from './output-continuation.ts';
import { softLandingNote, tokenBudgetSpent } from './run-budget.ts';
import { closeLoop, closingEntry, failStep, finishStep } from './step-closing.ts';
import { correctionRound } from './step-correction.ts';
import type { Decision, StepAction, StepConfig, StepEvent, StepState, StepWorld } from './step-state.ts';
import { recordToolOutcome } from './tool-failure-breaker.ts';
import { forModel, toolCallFrame, toolResultFrame } from './tool-frames.ts';

/**
 * The role worker's step as a pure state machine (docs/decisions/0009-worker-step-machine.md):
 * the rules of a step — turn cap, soft landing, output continuations, the empty-file round,
 * stop / steer / hand-back, the model-call and token budgets and the tool guards — and nothing else. The
 * shell in step-shell.ts performs the actions in order and feeds the answer of the last one
 * back as the next event, so the same events always give the same frames and journal.
 */
export function decide(config: StepConfig, state: StepState, event: StepEvent): Decision {
  if (event.type === 'failed') return failStep(state, event);
  switch (state.phase) {
    case 'start':
      if (event.type === 'start') return start(config, state, event);
      break;
    case 'loop':
      if (event.type === 'signals') return loopTop(state, event.world);
      if (event.type === 'turn_opened') return openTurn(config, state, event);
      break;
    case 'calling':
      if (event.type === 'model_replied') return replied(config, state, event);
      break;
    case 'tools':
      if (event.type === 'tool_done') return toolDone(config, state, event);
      break;
    case 'closing':
    case 'finishing':
      return closeLoop(config, state, event) ?? finishStep(config, state, event);
    case 'ended':
      break;
  }
  throw new Error(`step machine: ${event.type} does not fit phase ${state.phase}`);
}

function start(config: StepConfig, state: StepState, event: StepEvent & { type: 'start' }): Decision {
  const actions: StepAction[] = [];
  if (event.resumed) {
    // What the previous holder finished stands; the frames of its unfinished call are void.
    actions.push({
      kind: 'emit',
      frame: frame('step_resumed', config.runId, {
        agent: config.role,
        step: config.step,
        resumed_turn: state.turn,
        valid_through_id: event.validThroughId,
      }),
    });
    for (const write of event.unannounced) {
      actions.push({ kind: 'emit', frame: fileSavedFrame(config.runId, write) });
    }
  }
  if (event.fresh) {
    actions.push({
      kind: 'emit',
      frame: frame('agent_start', config.runId, { agent: config.role, step: config.step }),
    });
  }
  return nextTurn(config, { ...state, phase: 'loop' }, actions);
}

/** The loop's head: another turn while the reply needs one and the cap allows it. */
function nextTurn(config: StepConfig, state: StepState, actions: StepAction[]): Decision {
  if (state.loopDone || state.turn >= config.maxTurns) {
    return { state: { ...state, phase: 'closing' }, actions: [...actions, { kind: 'check_signals' }] };
  }
  return { state: { ...state, phase: 'loop' }, actions: [...actions, { kind: 'check_signals' }] };
}

function loopTop(state: StepState, world: StepWorld): Decision {
  // Stopped or handed back: no new call starts.
  if (world.stopReason !== undefined || world.handBack) {
    return closingEntry(state, world);
  }
  return { state, actions: [{ kind: 'open_turn' }] };
}

function openTurn(
  config: StepConfig,
  state: StepState,
  event: StepEvent & { type: 'turn_opened' },
): Decision {
  const actions: StepAction[] = [];
  let next: StepState = state;
  if (event.steering.length > 0) {
    next = {
      ...next,
      messages: [
        ...next.messages,
        ...event.steering.map((text): ChatMessage => ({ role: 'user', content: `[作者插话] ${text}` })),
      ],
    };
    for (const text of event.steering) {
      actions.push({ kind: 'emit', frame: frame('steering_received', config.runId, { content: text }) });
    }
    // A drained interjection exists nowhere else now: keep it through a takeover.
    actions.push({ kind: 'checkpoint', state: next });
  }
  // Either budget spent: the step closes the way a stop does, with the budget's own reason.
  const overBudget = !event.allowed
    ? ('model_call_cap' as const)
    : tokenBudgetSpent(event.tokensSpent, config.maxRunTokens)
      ? ('token_budget' as const)
      : undefined;
  if (overBudget) {
    const stopped = { ...next, stop: { kind: 'stopped' as const, stopReason: overBudget } };
    return { state: { ...stopped, phase: 'closing' }, actions: [...actions, { kind: 'check_signals' }] };
  }
  const note = softLandingNote(next.turn, config.maxTurns);
  if (note) next = { ...next, messages: [...next.messages, note] };
  const resume = next.openCapture;
  actions.push(
    { kind: 'promote_reads' },
    {
      kind: 'call_model',
      turn: next.turn,
      messages: next.messages,
      ...(resume ? { resume } : {}),
      keepOpenOnLength: mayKeepOpen(next.continuationsUsed, config.maxContinuations),
    },
  );
  return { state: { ...next, phase: 'calling', openCapture: undefined, inModelCall: true }, actions };
}

function replied(
  config: StepConfig,
  state: StepState,
  event: StepEvent & { type: 'model_replied' },
): Decision {
  const { result, world } = event;
  const after: StepState = { ...state, inModelCall: false };
  // The tokens were spent whatever happens to the reply, so the run's count always takes them.
  const tokens = result.usage.prompt_tokens + result.usage.completion_tokens;
  // A call cut to hand the step back is redone by the next worker: nothing of it counts here.
  if (world.handBack && world.stopReason === undefined) {
    const closing = closingEntry(after, world);
    return { ...closing, actions: [{ kind: 'count_tokens', tokens }, ...closing.actions] };
  }
  let next: StepState = {
    ...after,
    modelCalls: after.modelCalls + 1,
    wroteInline: after.wroteInline || wroteBodyInline(result),
    filesWritten: [...after.filesWritten, ...result.filesWritten],
    finalText: after.finalText + result.text,
    finishReason: result.finishReason,
  };
  const actions: StepAction[] = [{ kind: 'account_call', tokens }];
  if (result.toolCalls.length === 0) {
    next = { ...next, openCapture: result.openCapture };
    const more = continuationAfter(result, next.continuationsUsed, config.maxContinuations);
    if (more) {
      next = {
        ...next,
        continuationsUsed: next.continuationsUsed + 1,
        messages: [...next.messages, ...more],
      };
      return turnFinished(config, next, actions);
    }
    const corrected = correctionRound(config, next, world.pendingFile, result.rawText);
    if (corrected) return turnFinished(config, corrected, actions);
    next = { ...next, loopDone: true };
    actions.push({ kind: 'checkpoint', state: { ...next, turn: next.turn + 1 } });
    return { state: { ...next, phase: 'closing' }, actions: [...actions, { kind: 'check_signals' }] };
  }
  next = {
    ...next,
    messages: [
      ...next.messages,
      { role: 'assistant', content: result.text || null, tool_calls: result.toolCalls },
    ],
    toolTurn: {
      calls: result.toolCalls,
      next: 0,
      executed: 0,
      rawText: result.rawText,
      notices: result.notices,
    },
  };
  return {
    state: { ...next, phase: 'tools' },
    actions: [...actions, ...startTool(config, next, result.toolCalls[0]!)],
  };
}

/** The turn is over and another follows: journal it as finished, then back to the loop's head. */
function turnFinished(config: StepConfig, state: StepState, actions: StepAction[]): Decision {
  const next = { ...state, turn: state.turn + 1 };
  return nextTurn(config, next, [...actions, { kind: 'checkpoint', state: next }]);
}

function startTool(config: StepConfig, state: StepState, call: ToolCall): StepAction[] {
  return [
    { kind: 'emit', frame: toolCallFrame(config, call) },
    { kind: 'run_tool', call, turn: state.turn },
  ];
}

/**
 * One tool call answered: its result frame and message, then the guards (the breaker first),
 * then the batch's next call or the turn's end (docs/agent-behaviour.md 坑 12).
 */
function toolDone(config: StepConfig, state: StepState, event: StepEvent & { type: 'tool_done' }): Decision {
  const turn = state.toolTurn!;
  const call = turn.calls[turn.next]!;
  const actions: StepAction[] = [{ kind: 'emit', frame: toolResultFrame(config, call, event.outcome) }];
  const breaker = recordToolOutcome(state.breaker, call.function.name, event.outcome);
  const repeatedReads = countRepeatedReads(state.repeatedReads, event.outcome, event.writesFiles);
  let next: StepState = {
    ...state,
    breaker,
    repeatedReads,
    messages: [
      ...state.messages,
      { role: 'tool', tool_call_id: call.id, content: JSON.stringify(forModel(event.outcome)) },
    ],
    toolTurn: { ...turn, next: turn.next + 1, executed: turn.executed + 1 },
  };
  if (breaker.open) {
    actions.push({
      kind: 'log',
      level: 'warn',
      fields: { tool: call.function.name, reason: 'repeated_unavailable_tool_call' },
      message: 'tool failure circuit open',
    });
    next = withBatchStop(next, {
      kind: 'failed',
      stopReason: 'tool_failure_circuit_open',
      detail: 'repeated_unavailable_tool_call',
    });
  } else if (repeatedReads >= REPEATED_READ_LIMIT) {
    next = withBatchStop(next, { kind: 'stopped', stopReason: 'no_progress' });
  }
  const following = next.toolTurn!;
  if (!following.stop && following.next < following.calls.length) {
    return {
      state: next,
      actions: [...actions, ...startTool(config, next, following.calls[following.next]!)],
    };
  }
  return toolTurnOver(config, next, event.world, actions);
}

function withBatchStop(state: StepState, stop: NonNullable<StepState['stop']>): StepState {
  return { ...state, toolTurn: { ...state.toolTurn!, stop } };
}

function toolTurnOver(
  config: StepConfig,
  state: StepState,
  world: StepWorld,
  actions: StepAction[],
): Decision {
  const turn = state.toolTurn!;
  let stop = turn.stop;
  if (!stop && (world.yielded.handoff || world.yielded.clarification)) stop = { kind: 'yield' };
  // The model still wanted tools on the last turn the step allows.
  else if (!stop && state.turn >= config.maxTurns - 1)
    stop = { kind: 'stopped', stopReason: 'tool_turns_exhausted' };
  let next: StepState = {
    ...state,
    toolTurn: undefined,
    toolCalls: state.toolCalls + turn.executed,
    messages: [
      ...state.messages,
      ...turn.notices.map((notice): ChatMessage => ({ role: 'user', content: notice })),
    ],
  };
  if (stop?.kind === 'yield') {
    // A handoff or question waits for the body of a file the model left empty.
    const corrected = correctionRound(config, next, world.pendingFile, undefined);
    if (corrected) return turnFinished(config, corrected, actions);
  }
  if (stop) {
    next = { ...next, stop, loopDone: true };
    actions.push({ kind: 'checkpoint', state: { ...next, turn: next.turn + 1 } });
    return { state: { ...next, phase: 'closing' }, actions: [...actions, { kind: 'check_signals' }] };
  }
  return turnFinished(config, next, actions);
}
