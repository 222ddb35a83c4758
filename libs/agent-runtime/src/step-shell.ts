import type { BodyPartialReason, FileWrite, SseFrame, StepResult, ToolCall } from '@quill/contracts';
import { isTransientDbError, RunFencedError } from '@quill/db';
import { LlmCallError, quillErrorCodeFor } from '@quill/llm';
import type { PendingFile, ToolResult } from '@quill/tools';
import type { OpenCapture, TurnResult } from './model-turn.ts';
import { decide } from './step-machine.ts';
import type {
  StepAction,
  StepAnswer,
  StepConfig,
  StepEvent,
  StepFailure,
  StepState,
  StepWorld,
} from './step-state.ts';

/**
 * The ports the step machine's shell drives (docs/decisions/0009-worker-step-machine.md). The
 * worker wires them to the LLM, Postgres, Redis and the bus (step-runner.ts); a unit test wires
 * them to a scripted model and in-memory recorders.
 */
export interface StepPorts {
  /** One model call, streamed to the author; `<file>` bodies are saved as they close. */
  model: { call(request: Extract<StepAction, { kind: 'call_model' }>): Promise<TurnResult> };
  store: {
    checkpoint(state: StepState): Promise<void>;
    journalResult(state: StepState, result: StepResult): Promise<void>;
    saveOpenCapture(capture: OpenCapture, reason: BodyPartialReason): Promise<FileWrite | undefined>;
    /** Deletes the created file if it is still empty; true when it was. */
    removeEmptyFile(file: PendingFile): Promise<boolean>;
  };
  frames: {
    emit(frame: SseFrame): void;
    close(): Promise<void>;
    report(): { held_text?: string; ended_on_file_block?: boolean };
  };
  signals: {
    read(): Pick<StepWorld, 'stopReason' | 'handBack'>;
    /**
     * Opens a model call's turn, in one round trip: the author's interjections queued since the
     * last call (each delivered once), one model call counted against the run's budget
     * (`allowed` false when it is spent), and the run's prompt + completion tokens so far (the
     * step machine compares them to the cap).
     */
    openTurn(): Promise<{ steering: readonly string[]; allowed: boolean; tokensSpent: number }>;
    /** Adds one reply's tokens to the run's count. */
    spendTokens(tokens: number): Promise<void>;
  };
  tools: {
    view(): Omit<StepWorld, 'stopReason' | 'handBack'>;
    promoteReads(): void;
    execute(call: ToolCall, turn: number): Promise<{ outcome: ToolResult; writesFiles: boolean }>;
  };
  usage: { flush(): Promise<void> };
  log: {
    warn(fields: Record<string, unknown>, message: string): void;
    error(fields: Record<string, unknown>, message: string): void;
  };
}

/**
 * Runs the machine: performs each decision's actions in order and feeds the answer of the last
 * one back in. An action that throws becomes a `failed` event; the machine decides what that
 * means. `onState` sees every state (the store reads it while a model call streams).
 */
export async function driveStep(
  config: StepConfig,
  ports: StepPorts,
  initial: StepState,
  start: { resumed: boolean; fresh: boolean; validThroughId: number; unannounced: readonly FileWrite[] },
  onState: (state: StepState) => void = () => {},
): Promise<StepResult | 'handed_back' | undefined> {
  const world = (): StepWorld => ({ ...ports.signals.read(), ...ports.tools.view() });
  let state = initial;
  let event: StepEvent = { type: 'start', ...start, world: world() };
  for (;;) {
    const decision = decide(config, state, event);
    state = decision.state;
    onState(state);
    let answer: StepAnswer | undefined;
    try {
      for (const action of decision.actions) {
        if (action.kind === 'end') return action.result;
        if (action.kind === 'raise') throw new RaisedError(action.error);
        answer = await perform(ports, action);
      }
    } catch (error) {
      if (error instanceof RaisedError) throw error.original;
      answer = { type: 'failed', failure: classifyStepError(error), error };
    }
    if (!answer) throw new Error(`step machine stalled in phase ${state.phase}`);
    event = { ...answer, world: world() };
  }
}

/** Carries an error the machine decided to pass on, past the loop's own catch. */
class RaisedError {
  readonly original: unknown;
  constructor(original: unknown) {
    this.original = original;
  }
}

async function perform(ports: StepPorts, action: StepAction): Promise<StepAnswer | undefined> {
  switch (action.kind) {
    case 'emit':
      ports.frames.emit(action.frame);
      return undefined;
    case 'log':
      ports.log[action.level](action.fields, action.message);
      return undefined;
    case 'checkpoint':
      await ports.store.checkpoint(action.state);
      return undefined;
    case 'promote_reads':
      ports.tools.promoteReads();
      return undefined;
    case 'count_tokens':
      await ports.signals.spendTokens(action.tokens);
      return undefined;
    case 'account_call':
      await Promise.all([ports.signals.spendTokens(action.tokens), ports.usage.flush()]);
      return undefined;
    case 'flush_usage':
      if (action.tolerant) await flushQuietly(ports);
      else await ports.usage.flush();
      return undefined;
    case 'close_frames':
      if (action.quiet) await ports.frames.close().catch(() => undefined);
      else await ports.frames.close();
      return undefined;
    case 'journal_result':
      await ports.store
        .journalResult(action.state, action.result)
        .catch((error: unknown) => ports.log.warn({ err: error }, 'step result not journaled'));
      return undefined;
    case 'check_signals':
      return { type: 'signals' };
    case 'open_turn': {
      const { steering, allowed, tokensSpent } = await ports.signals.openTurn();
      return { type: 'turn_opened', steering, allowed, tokensSpent };
    }
    case 'call_model':
      return { type: 'model_replied', result: await ports.model.call(action) };
    case 'run_tool': {
      const ran = await ports.tools.execute(action.call, action.turn);
      return { type: 'tool_done', outcome: ran.outcome, writesFiles: ran.writesFiles };
    }
    case 'save_open_capture':
      return {
        type: 'capture_saved',
        write: await ports.store.saveOpenCapture(action.capture, action.reason),
      };
    case 'remove_empty_file': {
      const removed = await ports.store.removeEmptyFile(action.file);
      return { type: 'empty_file_removed', removed: removed ? action.file : undefined };
    }
    case 'usage_then_signals':
      await flushQuietly(ports);
      return { type: 'usage_flushed' };
    case 'close_then_report':
      await ports.frames.close();
      return { type: 'frames_closed', report: ports.frames.report() };
    case 'end':
    case 'raise':
      throw new Error(`step machine: ${action.kind} is handled by the loop`);
  }
}

function flushQuietly(ports: StepPorts): Promise<void> {
  return ports.usage
    .flush()
    .catch((error: unknown) => ports.log.error({ err: error }, 'usage report failed'));
}

/** What an action's error means for the step: a lost write lease, or its error code. */
export function classifyStepError(error: unknown): StepFailure {
  if (error instanceof RunFencedError) return { kind: 'fenced' };
  const code =
    error instanceof LlmCallError
      ? quillErrorCodeFor(error)
      : isTransientDbError(error)
        ? 'storage_unavailable'
        : 'internal_error';
  return { kind: 'error', code };
}
