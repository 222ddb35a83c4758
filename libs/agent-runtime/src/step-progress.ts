import type { BodyPartialReason, FileWrite, StepResult, TaskEnvelope } from '@quill/contracts';
import { type RunFence, withRunFence } from '@quill/db';
import { saveAiBody, saveFencedStepJournal } from '@quill/db/workers';
import type { PendingFile, ToolRunState } from '@quill/tools';
import type { Pool } from 'pg';
import type { ChatHoldEmitter } from './chat-hold.ts';
import { type StepJournalData, toolStateToJournal, writeStepJournal } from './step-journal.ts';
import type { StepState } from './step-state.ts';

/**
 * The step machine's file-store port (docs/ai-writes.md): a step's state made durable in two
 * ways, `checkpoint` after a finished model turn, and `saveFileBody`, which saves a body
 * compare-and-set and records it in the journal in the same transaction. The rules of when
 * live in step-machine.ts; this module only turns a state into journal rows.
 */
export interface StepStore {
  /** The SSE id of the newest frame that stands. */
  readonly validThroughId: number;
  snapshot(state: StepState, overrides?: Partial<StepJournalData>): StepJournalData;
  /** Everything so far stands: the frames are stored, then the journal is. */
  checkpoint(state: StepState): Promise<void>;
  /** Records the step's result; only a takeover reads it, so it does not retry. */
  journalResult(state: StepState, result: StepResult): Promise<void>;
  saveFileBody(
    file: PendingFile,
    body: string,
    partialReason?: BodyPartialReason,
    replyText?: string,
  ): Promise<FileWrite>;
}

export function createStepStore(parts: {
  pool: Pool;
  fence: RunFence;
  task: TaskEnvelope;
  validThroughId: number;
  /** The task's messages and the role directive: the journal keeps only what follows them. */
  prefixLength: number;
  /** The machine's state right now (a body is saved while a model call streams). */
  current: () => StepState;
  tools: ToolRunState;
  emitter: ChatHoldEmitter;
}): StepStore {
  const { pool, fence, task, prefixLength, tools, emitter } = parts;
  const runId = task.run_id;
  let validThroughId = parts.validThroughId;

  const snapshot = (state: StepState, overrides: Partial<StepJournalData> = {}): StepJournalData => ({
    v: 1,
    role: task.role,
    turn: state.turn,
    loop_done: state.loopDone,
    messages: state.messages.slice(prefixLength),
    model_calls: state.modelCalls,
    tool_calls: state.toolCalls,
    files_written: [...state.filesWritten],
    final_text: state.finalText,
    finish_reason: state.finishReason,
    ...toolStateToJournal(tools),
    hold: emitter.snapshot(),
    continuations_used: state.continuationsUsed,
    ...(state.openCapture ? { open_capture: state.openCapture } : {}),
    corrected: [...state.corrected],
    unannounced: [],
    valid_through_id: validThroughId,
    ...overrides,
  });

  /**
   * The journal as if the reply had ended at `</file>`; outside a model call (a body left open
   * by a cut reply, saved after the loop) the transcript and counters are already right.
   */
  const journalAfterBody = (write: FileWrite, body: string, replyText: string): StepJournalData => {
    const state = parts.current();
    const journaledTools = toolStateToJournal(tools);
    const snapshots = [
      ...journaledTools.snapshots.filter((entry) => entry.file_id !== write.file_id),
      { file_id: write.file_id, version: write.version, full: true, promoted: true },
    ];
    const inCall = state.inModelCall;
    return {
      ...snapshot(state),
      ...journaledTools,
      pending_file: undefined,
      snapshots,
      written_file_ids: [...new Set([...journaledTools.written_file_ids, write.file_id])],
      turn: inCall ? state.turn + 1 : state.turn,
      loop_done: true,
      ...(inCall
        ? {
            messages: [
              ...state.messages.slice(prefixLength),
              { role: 'assistant' as const, content: `${replyText}<file>\n${body}\n</file>` },
            ],
            model_calls: state.modelCalls + 1,
            final_text: state.finalText + replyText,
          }
        : {}),
      files_written: [...state.filesWritten, write],
      unannounced: [write],
    };
  };

  return {
    get validThroughId() {
      return validThroughId;
    },
    snapshot,
    async checkpoint(state) {
      validThroughId = await emitter.settle();
      // One statement: the fence and the journal together (fencedStatement).
      await saveFencedStepJournal(pool, fence, task.step, snapshot(state));
    },
    async journalResult(state, result) {
      await saveFencedStepJournal(
        pool,
        { ...fence, retryMs: 0 },
        task.step,
        snapshot(state, { loop_done: true, result }),
      );
    },
    async saveFileBody(file, body, partialReason, replyText = '') {
      validThroughId = await emitter.settle();
      const writeKey = `${runId}:s${task.step}:t${parts.current().turn}:body:${file.fileId}`;
      return withRunFence(pool, fence, async (client) => {
        const saved = await saveAiBody(client, {
          projectId: task.project_id,
          fileId: file.fileId,
          baseVersion: file.baseVersion,
          content: body,
          runId,
          writeKey,
          partialReason: partialReason ?? null,
        });
        const write: FileWrite = {
          file_id: saved.fileId,
          title: saved.title,
          file_type: saved.fileType,
          version: saved.version,
          body_chars: body.length,
          ...(saved.kind === 'drafted'
            ? {
                draft_of: { file_id: saved.draftOf.fileId, title: saved.draftOf.title },
                draft_reason: saved.reason,
              }
            : {}),
          ...(partialReason ? { partial_reason: partialReason } : {}),
        };
        await writeStepJournal(client, runId, task.step, journalAfterBody(write, body, replyText));
        return write;
      });
    },
  };
}
