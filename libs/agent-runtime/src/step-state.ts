import type {
  AgentRole,
  BodyPartialReason,
  ChatMessage,
  ErrorCode,
  FileWrite,
  SseFrame,
  StepResult,
  ToolCall,
} from '@quill/contracts';
import type { PendingFile, ToolResult, ToolRunState } from '@quill/tools';
import type { OpenCapture, TurnResult } from './model-turn.ts';
import type { StepJournalData } from './step-journal.ts';
import type { StepStop } from './step-outcome.ts';
import { type BreakerState, CLOSED_BREAKER } from './tool-failure-breaker.ts';

/**
 * The types of the worker's step machine (docs/decisions/0009-worker-step-machine.md): what
 * `decide` knows, what the shell tells it, and what it asks the shell to do.
 */
export interface StepConfig {
  runId: string;
  role: AgentRole;
  step: number;
  workerInstance: string;
  /** AGENT_TOOL_CALL_MAX_ITERATIONS: model turns one step may take. */
  maxTurns: number;
  /** AGENT_MAX_OUTPUT_CONTINUATIONS: follow-up calls for a reply cut at the output limit. */
  maxContinuations: number;
  /** The empty-file correction round runs on requests that may write. */
  correctionEnabled: boolean;
  /** AGENT_RUN_MAX_TOKENS: prompt + completion tokens the whole run may spend. */
  maxRunTokens: number;
}

export type StepPhase = 'start' | 'loop' | 'calling' | 'tools' | 'closing' | 'finishing' | 'ended';

/** Everything a step's rules read and move. Never mutated: `decide` returns a new one. */
export interface StepState {
  phase: StepPhase;
  /** The model turn in progress (or next). */
  turn: number;
  /** The last reply needs no answer: only the step's end remains. */
  loopDone: boolean;
  finishReason: string;
  /** The whole transcript sent to the model: the task's messages, the directive, the step's own. */
  messages: readonly ChatMessage[];
  modelCalls: number;
  toolCalls: number;
  filesWritten: readonly FileWrite[];
  finalText: string;
  continuationsUsed: number;
  /** A `<file>` body a length-cut reply left open, for the next call (or the step's end). */
  openCapture?: OpenCapture | undefined;
  /** Files whose empty-file correction round already ran. */
  corrected: readonly string[];
  /** A reply wrote a body in the same reply as its create_file. */
  wroteInline: boolean;
  /** A model call is streaming (a body saved now ends its reply in the journal). */
  inModelCall: boolean;
  breaker: BreakerState;
  repeatedReads: number;
  /** The reply whose tool calls are running, and how far they got. */
  toolTurn?: ToolTurn | undefined;
  stop?: StepStop | undefined;
  errorCode?: ErrorCode | undefined;
  removedEmpty: boolean;
  /** The run's stop reason as read right before `message_end`. */
  stoppedWith?: string | undefined;
}

export interface ToolTurn {
  calls: readonly ToolCall[];
  next: number;
  executed: number;
  rawText: string;
  notices: readonly string[];
  /** Set when a guard ended the batch before its last call. */
  stop?: StepStop | undefined;
}

/** What the shell observed of the world when it fed an event in. */
export interface StepWorld {
  /** The run's stop reason once the author (or the deadline) stopped it. */
  stopReason: string | undefined;
  /** This replica is shutting down and its drain window is over. */
  handBack: boolean;
  /** The created file still waiting for its body. */
  pendingFile: PendingFile | undefined;
  /** What the model asked the router for (handoff_to_agent / request_clarification). */
  yielded: Pick<ToolRunState, 'handoff' | 'clarification' | 'sources' | 'authorQuestions'>;
  /** Files this step wrote through its tools. */
  writtenFiles: number;
}

/** How an action that threw is classified, for the step's end. */
export type StepFailure = { kind: 'fenced' } | { kind: 'error'; code: ErrorCode };

/** What the shell answers an action with; it adds the world it observed to make the event. */
export type StepAnswer =
  | {
      type: 'start';
      /** A journal or a redelivery: the step resumes and says where from. */
      resumed: boolean;
      /** No journal: the agent starts afresh. */
      fresh: boolean;
      validThroughId: number;
      unannounced: readonly FileWrite[];
    }
  | { type: 'signals' }
  /** `allowed`: the model-call budget took this call; `tokensSpent`: the run's tokens so far. */
  | { type: 'turn_opened'; steering: readonly string[]; allowed: boolean; tokensSpent: number }
  | { type: 'model_replied'; result: TurnResult }
  | { type: 'tool_done'; outcome: ToolResult; writesFiles: boolean }
  | { type: 'capture_saved'; write: FileWrite | undefined }
  | { type: 'empty_file_removed'; removed: PendingFile | undefined }
  | { type: 'usage_flushed' }
  | { type: 'frames_closed'; report: { held_text?: string; ended_on_file_block?: boolean } }
  | { type: 'failed'; failure: StepFailure; error: unknown };

export type StepEvent = StepAnswer & { world: StepWorld };

export type StepAction =
  | { kind: 'emit'; frame: SseFrame }
  | { kind: 'log'; level: 'warn' | 'error'; fields: Record<string, unknown>; message: string }
  /** Make `state` durable: the frames so far are stored, then the journal is. */
  | { kind: 'checkpoint'; state: StepState }
  /** Drop the tools' full reads into the model's view before the next call. */
  | { kind: 'promote_reads' }
  /** Add a reply's prompt + completion tokens to the run's token count. */
  | { kind: 'count_tokens'; tokens: number }
  /**
   * A served call's two accounts at once, the run's token count (Redis) and its usage report (the
   * bus): neither reads the other, so they take one round trip; either failing ends the step.
   */
  | { kind: 'account_call'; tokens: number }
  /** Report usage; `tolerant` logs a failure instead of ending the step with it. */
  | { kind: 'flush_usage'; tolerant: boolean }
  /** Close the frame stream; `quiet` ignores a failure (the step is abandoned anyway). */
  | { kind: 'close_frames'; quiet: boolean }
  /** Best effort: only a takeover reads the journaled result. */
  | { kind: 'journal_result'; state: StepState; result: StepResult }
  | { kind: 'end'; result: StepResult | 'handed_back' | undefined }
  /** The step's end failed outside the loop: the error goes to the task handler. */
  | { kind: 'raise'; error: unknown }
  // The rest each answer with one event; they come last in a decision.
  | { kind: 'check_signals' }
  | { kind: 'open_turn' }
  | {
      kind: 'call_model';
      turn: number;
      messages: readonly ChatMessage[];
      resume?: OpenCapture;
      keepOpenOnLength: boolean;
    }
  | { kind: 'run_tool'; call: ToolCall; turn: number }
  | { kind: 'save_open_capture'; capture: OpenCapture; reason: BodyPartialReason }
  | { kind: 'remove_empty_file'; file: PendingFile }
  | { kind: 'usage_then_signals' }
  | { kind: 'close_then_report' };

export interface Decision {
  state: StepState;
  actions: StepAction[];
}

/** Where a step starts: from its task alone, or from the journal the last holder left. */
export function initialStepState(
  messages: readonly ChatMessage[],
  journal: StepJournalData | null,
): StepState {
  return {
    phase: 'start',
    turn: journal?.turn ?? 0,
    loopDone: journal?.loop_done ?? false,
    finishReason: journal?.finish_reason ?? 'stop',
    messages,
    modelCalls: journal?.model_calls ?? 0,
    toolCalls: journal?.tool_calls ?? 0,
    filesWritten: [...(journal?.files_written ?? [])],
    finalText: journal?.final_text ?? '',
    continuationsUsed: journal?.continuations_used ?? 0,
    openCapture: journal?.open_capture,
    corrected: [...(journal?.corrected ?? [])],
    wroteInline: false,
    inModelCall: false,
    // The breaker and the no-progress guard restart empty on a takeover (docs/ai-writes.md).
    breaker: CLOSED_BREAKER,
    repeatedReads: 0,
    removedEmpty: false,
  };
}
