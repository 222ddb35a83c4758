import { type ErrorCode, frame, type StepResult } from '@quill/contracts';
import { fileOperationsFromTranscript } from './file-operations.ts';
import { partialReasonForStop } from './model-turn.ts';
import { stepResultFor, stopReasonOf } from './step-outcome.ts';
import type { Decision, StepConfig, StepEvent, StepState, StepWorld } from './step-state.ts';

/**
 * The end of a step (docs/ai-writes.md): a body a cut reply left open is saved, a created file
 * left empty after its correction round is removed, usage goes out, then `message_end` and the
 * step result. A hand-back and a lost write lease end it early, without a result of its own.
 */

/** The loop is over: what happens first depends on why (read fresh from the world). */
export function closingEntry(state: StepState, world: StepWorld): Decision {
  const closing: StepState = { ...state, phase: 'closing' };
  if (world.handBack && world.stopReason === undefined) return handedBack(closing);
  const open = closing.openCapture;
  if (open) {
    return {
      state: { ...closing, openCapture: undefined },
      actions: [
        {
          kind: 'save_open_capture',
          capture: open,
          reason: world.stopReason ? partialReasonForStop(world.stopReason) : 'output_limit',
        },
      ],
    };
  }
  return removeUnwritten(closing, world);
}

export function closeLoop(config: StepConfig, state: StepState, event: StepEvent): Decision | undefined {
  if (state.phase !== 'closing') return undefined;
  switch (event.type) {
    case 'signals':
    case 'model_replied':
      return closingEntry(state, event.world);
    case 'capture_saved': {
      const next = event.write ? { ...state, filesWritten: [...state.filesWritten, event.write] } : state;
      return removeUnwritten(next, event.world);
    }
    case 'empty_file_removed': {
      if (!event.removed) return toFinishing(state);
      const file = event.removed;
      return toFinishing({ ...state, removedEmpty: true }, [
        {
          kind: 'emit',
          frame: frame('file_removed', config.runId, {
            agent: config.role,
            file_id: file.fileId,
            title: file.title,
            reason: 'empty_file_unwritten',
          }),
        },
        {
          kind: 'log',
          level: 'warn',
          fields: { file_id: file.fileId },
          message: 'created file left empty after its correction round; removed',
        },
      ]);
    }
    default:
      return undefined;
  }
}

/**
 * The correction round did not bring the body: the empty file goes, and a step that wrote
 * nothing else did not do what it was asked. Not after a stop or a guard's stop.
 */
function removeUnwritten(state: StepState, world: StepWorld): Decision {
  const pending = world.pendingFile;
  const guardStopped = state.stop !== undefined && state.stop.kind !== 'yield';
  if (!pending || world.stopReason !== undefined || guardStopped) return toFinishing(state);
  return { state, actions: [{ kind: 'remove_empty_file', file: pending }] };
}

function toFinishing(state: StepState, actions: Decision['actions'] = []): Decision {
  // Failed attempts are billed evidence too: their usage goes out whatever ended the step.
  return { state: { ...state, phase: 'finishing' }, actions: [...actions, { kind: 'usage_then_signals' }] };
}

export function finishStep(config: StepConfig, state: StepState, event: StepEvent): Decision {
  if (state.phase === 'finishing' && event.type === 'usage_flushed') {
    const stoppedWith = event.world.stopReason;
    let errorCode = state.errorCode;
    if (
      !errorCode &&
      state.removedEmpty &&
      state.filesWritten.length === 0 &&
      event.world.writtenFiles === 0
    ) {
      errorCode = 'empty_file_unwritten';
    }
    // A step that ends empty_file_unwritten finished its replies; only a cut reply ends in 'error'.
    const replyCut = errorCode !== undefined && errorCode !== 'empty_file_unwritten';
    const stopReason = stoppedWith ?? (replyCut ? 'error' : stopReasonOf(state.stop, state.finishReason));
    return {
      state: { ...state, stoppedWith, errorCode },
      actions: [
        {
          kind: 'emit',
          frame: frame('message_end', config.runId, { agent: config.role, stop_reason: stopReason }),
        },
        { kind: 'close_then_report' },
      ],
    };
  }
  if (state.phase === 'finishing' && event.type === 'frames_closed') {
    const result = stepResult(config, state, event.world, event.report);
    const ended: StepState = { ...state, phase: 'ended' };
    return {
      state: ended,
      actions: [
        { kind: 'journal_result', state: ended, result },
        { kind: 'end', result },
      ],
    };
  }
  throw new Error(`step machine: ${event.type} does not fit phase ${state.phase}`);
}

function stepResult(
  config: StepConfig,
  state: StepState,
  world: StepWorld,
  report: { held_text?: string; ended_on_file_block?: boolean },
): StepResult {
  const base = {
    step: config.step,
    role: config.role,
    worker_instance: config.workerInstance,
    files_written: [...state.filesWritten],
    model_calls: state.modelCalls,
    tool_calls: state.toolCalls,
    final_text: state.finalText,
    ...report,
    file_operations: fileOperationsFromTranscript(state.messages, state.filesWritten),
  };
  if (state.stoppedWith) return { ...base, outcome: 'stopped', stop_reason: state.stoppedWith } as StepResult;
  if (state.errorCode) {
    return { ...base, outcome: 'failed', stop_reason: 'error', error_code: state.errorCode };
  }
  return stepResultFor(base, state.stop, state.finishReason, world.yielded);
}

/** The journal stands at the last finished turn; the frames since are voided by the taker. */
function handedBack(state: StepState): Decision {
  return {
    state: { ...state, phase: 'ended' },
    actions: [
      // Usage of the dropped call is billed evidence like any other attempt's: it goes out first.
      { kind: 'flush_usage', tolerant: true },
      { kind: 'close_frames', quiet: true },
      { kind: 'end', result: 'handed_back' },
    ],
  };
}

/** An action threw (the `catch` of the step's loop). */
export function failStep(state: StepState, event: StepEvent & { type: 'failed' }): Decision {
  // Closing the frame stream after message_end failed: nothing is left to save.
  if (state.phase === 'finishing' || state.phase === 'ended') {
    return { state: { ...state, phase: 'ended' }, actions: [{ kind: 'raise', error: event.error }] };
  }
  const { world, failure } = event;
  if (failure.kind === 'fenced') {
    return {
      state: { ...state, phase: 'ended' },
      actions: [
        {
          kind: 'log',
          level: 'warn',
          fields: { err: event.error },
          message: 'write lease lost; step abandoned without a result',
        },
        { kind: 'close_frames', quiet: true },
        { kind: 'end', result: undefined },
      ],
    };
  }
  const after = { ...state, inModelCall: false, toolTurn: undefined };
  if (world.handBack && world.stopReason === undefined) return handedBack(after);
  if (world.stopReason !== undefined) return toFinishing(after);
  const errorCode: ErrorCode = failure.code;
  return toFinishing({ ...after, errorCode }, [
    {
      kind: 'log',
      level: 'error',
      fields: { err: event.error, error_code: errorCode },
      message: 'step failed',
    },
  ]);
}
