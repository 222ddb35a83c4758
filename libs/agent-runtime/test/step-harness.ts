import type { ChatMessage, FileWrite, SseFrame, StepResult } from '@quill/contracts';
import { createScriptedModel, type ScriptedReply } from '@quill/llm/testing';
import { createToolRunState, type PendingFile, type ToolResult } from '@quill/tools';
import { runModelTurn, saveOpenCapture } from '../src/model-turn.ts';
import { driveStep, type StepPorts } from '../src/step-shell.ts';
import { initialStepState, type StepConfig, type StepState } from '../src/step-state.ts';

/**
 * The step machine with its shell and in-memory ports: the real model turn over a scripted model,
 * tools answered by name, file saves and the journal kept in arrays. No database, bus or Redis.
 */
export const PENDING: PendingFile = {
  fileId: '00000000-0000-4000-8000-0000000000f1',
  title: '第一章',
  fileType: 'draft',
  baseVersion: 0,
};

export interface HarnessOptions {
  replies: ScriptedReply[];
  maxTurns?: number;
  maxContinuations?: number;
  readOnly?: boolean;
  /** Model calls the run's budget still allows. */
  budget?: number;
  /** AGENT_RUN_MAX_TOKENS for the step, and the run's tokens spent before it starts. */
  maxRunTokens?: number;
  tokensSpent?: number;
  /** Interjections waiting before the model call with this index. */
  steering?: Record<number, string[]>;
  /** Stop the run as `user_stopped` after this chunk of this call. */
  stopAt?: { call: number; chunk: number };
  /** Hand the step back (replica shutdown) after this chunk of this call. */
  handBackAt?: { call: number; chunk: number };
  /** The created file the step starts with (a create_file before this step's first call). */
  pending?: PendingFile;
}

export interface HarnessRun {
  result: StepResult | 'handed_back' | undefined;
  frames: SseFrame[];
  text: string;
  /** Every journal checkpoint's state, in order. */
  checkpoints: StepState[];
  saved: Array<{ file: PendingFile; body: string; partial?: string }>;
  requests: readonly { messages: ChatMessage[] }[];
  logs: string[];
  removed: string[];
  /** The tokens each `count_tokens` added to the run's count, in order. */
  spentTokens: number[];
}

/** Tools answered by name: enough to move the rules (create, hand off, fail, repeat-read). */
function answer(
  name: string,
  args: Record<string, unknown>,
  tools: ReturnType<typeof createToolRunState>,
): ToolResult {
  switch (name) {
    case 'create_file':
      tools.pendingFile = { ...PENDING, title: String(args.title ?? PENDING.title) };
      return { status: 'ok', summary: 'created', data: { file_id: PENDING.fileId, title: PENDING.title } };
    case 'handoff_to_agent':
      tools.handoff = { to_agent: 'quality_reviewer', reason: String(args.reason ?? '') };
      return { status: 'ok', summary: 'handed off', data: {} };
    case 'query_files':
      return args.again
        ? { status: 'error', error_type: 'repeated_read', message: 'already read' }
        : { status: 'ok', summary: 'read', data: {} };
    case 'explode':
      throw new Error('tool crashed');
    default:
      return { status: 'error', error_type: 'tool_not_found', message: `no tool ${name}` };
  }
}

export async function runHarness(options: HarnessOptions): Promise<HarnessRun> {
  const config: StepConfig = {
    runId: '00000000-0000-4000-8000-0000000000aa',
    role: 'writer',
    step: 0,
    workerInstance: 'w-test',
    maxTurns: options.maxTurns ?? 8,
    maxContinuations: options.maxContinuations ?? 3,
    correctionEnabled: options.readOnly !== true,
    maxRunTokens: options.maxRunTokens ?? Number.POSITIVE_INFINITY,
  };
  const spentTokens: number[] = [];
  let runTokens = options.tokensSpent ?? 0;
  const frames: SseFrame[] = [];
  const checkpoints: StepState[] = [];
  const saved: HarnessRun['saved'] = [];
  const logs: string[] = [];
  const removed: string[] = [];
  let text = '';
  let stopReason: string | undefined;
  let handBack = false;
  let budget = options.budget ?? Number.POSITIVE_INFINITY;
  let calls = 0;
  const abort = new AbortController();
  const tools = createToolRunState();
  tools.pendingFile = options.pending;
  const emitter = {
    text: (delta: string) => {
      text += delta;
    },
    fileDelta: () => {},
    thinking: () => {},
    emit: (value: SseFrame) => frames.push(value),
    close: async () => {},
    settle: async () => frames.length,
    framesPublished: 0,
  };
  let version = 0;
  const saveFileBody = async (file: PendingFile, body: string, partial?: string): Promise<FileWrite> => {
    saved.push({ file, body, ...(partial ? { partial } : {}) });
    return {
      file_id: file.fileId,
      title: file.title,
      file_type: file.fileType,
      version: ++version,
      body_chars: body.length,
      ...(partial ? { partial_reason: partial as FileWrite['partial_reason'] } : {}),
    };
  };
  const llm = createScriptedModel(options.replies, {
    onChunk(index) {
      const call = calls - 1;
      if (options.stopAt?.call === call && options.stopAt.chunk === index) {
        stopReason = 'user_stopped';
        abort.abort();
      }
      if (options.handBackAt?.call === call && options.handBackAt.chunk === index) {
        handBack = true;
        abort.abort();
      }
    },
  });
  const turnDependencies = { emitter, state: tools, runId: config.runId, saveFileBody };
  const ports: StepPorts = {
    model: {
      call(request) {
        calls++;
        return runModelTurn(
          {
            ...turnDependencies,
            llm,
            role: 'writer',
            signal: abort.signal,
            stopReason: () => stopReason,
            abandoned: () => handBack && stopReason === undefined,
          },
          {
            messages: [...request.messages],
            tools: [],
            ...(request.resume ? { resume: request.resume } : {}),
            keepOpenOnLength: request.keepOpenOnLength,
          },
        );
      },
    },
    store: {
      checkpoint: async (state) => {
        checkpoints.push(state);
      },
      journalResult: async () => {},
      saveOpenCapture: (capture, reason) => saveOpenCapture(turnDependencies, capture, reason),
      async removeEmptyFile(file) {
        tools.pendingFile = undefined;
        removed.push(file.fileId);
        return true;
      },
    },
    frames: { emit: emitter.emit, close: async () => {}, report: () => ({}) },
    signals: {
      read: () => ({ stopReason, handBack }),
      openTurn: async () => ({
        steering: options.steering?.[calls] ?? [],
        allowed: budget-- > 0,
        tokensSpent: runTokens,
      }),
      spendTokens: async (count) => {
        spentTokens.push(count);
        runTokens += count;
      },
    },
    tools: {
      view: () => ({
        pendingFile: tools.pendingFile,
        yielded: {
          handoff: tools.handoff,
          clarification: tools.clarification,
          sources: tools.sources,
          authorQuestions: tools.authorQuestions,
        },
        writtenFiles: tools.writtenFileIds.size,
      }),
      promoteReads: () => {},
      async execute(call) {
        const args = JSON.parse(call.function.arguments || '{}') as Record<string, unknown>;
        return {
          outcome: answer(call.function.name, args, tools),
          writesFiles: call.function.name === 'create_file',
        };
      },
    },
    usage: { flush: async () => {} },
    log: {
      warn: (_fields, message) => logs.push(message),
      error: (_fields, message) => logs.push(message),
    },
  };
  const prefix: ChatMessage[] = [{ role: 'user', content: '写第一章' }];
  const result = await driveStep(config, ports, initialStepState(prefix, null), {
    resumed: false,
    fresh: true,
    validThroughId: 0,
    unannounced: [],
  });
  return { result, frames, text, checkpoints, saved, requests: llm.requests, logs, removed, spentTokens };
}

export const types = (run: HarnessRun) => run.frames.map((frame) => frame.type);
